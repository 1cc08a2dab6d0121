#!/usr/bin/env bash
# A verdict is written once in ops/decisions.md and committed once, even
# when xloop is killed between writing the entry and committing it, or
# between committing it and recording that it did (the soak's check,
# issue 21: the repair after such a crash appended the entry again, and
# after the second kind committed it again). Crash points: test build.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "decisions written once" "run once, without accounting"
	finish
	exit
fi

X=${XLOOP_ASAN_BIN:?}
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }

new_study "$d" once 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
V=0
echo "START v=$V device=cpu"
echo "{\"score\": $V}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt job.sh --tag base --cv" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
for v in 1 2; do u new "v$v" --from base --set "V=$v" >/dev/null; done

wait_idle() {
	local i
	for i in $(seq 1 60); do
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && return 0
		sleep 1
	done
}
entries() { grep -c "^## .* · $1 attempt 1: " "$d/ops/decisions.md"; }
commits() { as_user git -C "$d" log --format=%s -- ops/decisions.md | grep -c "^xloop: verdict once/$1 attempt 1: "; }

step "submit v1" u submit v1 >/dev/null
wait_idle
expect_rc 137 "killed after writing v1's entry, before the commit" crash decide-after-write judge
u judge >/dev/null 2>&1
check "v1's verdict is in ops/decisions.md once ($(entries v1))" test "$(entries v1)" = 1
check "and committed once ($(commits v1))" test "$(commits v1)" = 1

step "submit v2" u submit v2 >/dev/null
wait_idle
expect_rc 137 "killed after committing v2's entry, before recording it" crash verdict-after-commit judge
u judge >/dev/null 2>&1
check "v2's verdict is in ops/decisions.md once ($(entries v2))" test "$(entries v2)" = 1
check "and committed once ($(commits v2))" test "$(commits v2)" = 1
check "nothing of decisions.md is left uncommitted" \
	test -z "$(as_user git -C "$d" status --porcelain -- ops/decisions.md)"
finish
