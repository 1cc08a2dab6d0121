#!/usr/bin/env bash
# Crash safety on the real cluster (SPEC rule 6): xloop killed with SIGKILL
# at every step of a submission and of a verdict, an sbatch that submits
# and then fails silently, 20 ticks at once, the controller down. After
# recovery: exactly one Slurm job per attempt, no attempt or decision lost.
# The crash points exist only in the test build (build/asan/xloop).
. "$(dirname "$0")/lib.sh"

X=${XLOOP_ASAN_BIN:?}
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }

step "git init -q -b main" as_user git -C "$d" init -q -b main
step "git config user.name Test User" as_user git -C "$d" config user.name "Test User"
step "git config user.email test@example.com" as_user git -C "$d" config user.email test@example.com
step "init --study c" u init --study c >/dev/null
step "edit xloop.json" /usr/bin/python3 - "$d/xloop.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="")
c["queue"]["depth"] = 0
c.setdefault("driver", {})["mode"] = "none"  # counts jobs: no feeders
json.dump(c, open(p, "w"), indent=2)
PY
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
V=0
SLEEP=2
echo START
#GATE
sleep $SLEEP
echo "{\"score\": $V}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
# the first runs wait at a gate until section 4 opens it: whatever earlier
# calls did, their attempts are still to judge there (on a busy machine they
# had ended, and next had judged them, before the crash point could be hit)
step "gate job.sh" gate_job "$T_TMP/job.sh"
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"
printf '{"score": 0}\n' >"$T_TMP/cv.json"
step "adopt job.sh --tag base --cv" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
for v in 1 2 3 4 5 6; do u new "v$v" --from base --set "V=$v" >/dev/null; done

jobs_named() { as_user squeue -h -u "$XLOOP_TEST_USER" -n "$1" -o %i | wc -l; }
all_jobs_named() {	# this study's jobs, live or finished, from the controller's memory
	as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c "JobName=$1 "
}
attempt_field() {	# tag field
	as_user "$X" -C "$d" status "$1" --json |
		/usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['runs'][0]['attempts'][-1][sys.argv[1]])" "$2"
}
idle() { [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; }
wait_idle() { wait_for 300 idle; }

# 0. killed inside the intent's transaction: SQLite rolls it back, nothing half-written
expect_rc 137 "killed inside the DB transaction" crash submit-in-transaction submit v1
check "the DB opens and has no attempt for v1" test "$(as_user "$X" -C "$d" status v1 --json |
	/usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"][0]["attempts"]))')" = 0
check "no job reached Slurm for it" test "$(all_jobs_named v1)" = 0

# 1. killed after the intent, before sbatch: no job; the intent is failed, not resubmitted
expect_rc 137 "killed after recording the intent" crash submit-after-intent submit v1
check "the attempt is left in 'submitting'" test "$(attempt_field v1 phase)" = submitting
check "no job reached Slurm" test "$(all_jobs_named v1)" = 0
as_user env XLOOP_TEST_ORPHAN_SECS=0 "$X" -C "$d" judge >/dev/null 2>&1
check "reconcile marks the intent submit_failed" test "$(attempt_field v1 phase)" = submit_failed
check "still no job for it" test "$(all_jobs_named v1)" = 0
expect_rc 0 "a retry submits attempt 2" u retry v1 --no-chain
check "exactly one job for v1" test "$(all_jobs_named v1)" = 1

# 2. killed after sbatch, before the job id was recorded: found by its token
expect_rc 137 "killed right after sbatch" crash submit-after-sbatch submit v2 --no-chain
check "its job exists" test "$(all_jobs_named v2)" = 1
check "the attempt has no job id yet" test "$(attempt_field v2 job_id)" = ""
u resume >"$T_TMP/resume.txt" 2>&1
check "resume reports the repair" grep -q "found its job .* by its token" "$T_TMP/resume.txt"
check "the attempt adopted the job" sh -c "[ -n \"\$(runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status v2 --json | grep -o '\"job_id\": \"[0-9]*\"')\" ]"
u judge >/dev/null 2>&1
check "still exactly one job for v2" test "$(all_jobs_named v2)" = 1

# 3. an sbatch that submits and then exits 1 saying nothing (seed 003)
step "mkdir -p fakebin" mkdir -p "$T_TMP/fakebin"
cat >"$T_TMP/fakebin/sbatch" <<FAKE
#!/bin/sh
$(command -v sbatch) "\$@" >/dev/null 2>&1
exit 1
FAKE
step "chmod 755 fakebin sbatch" chmod 755 "$T_TMP/fakebin" "$T_TMP/fakebin/sbatch"
as_user env PATH="$T_TMP/fakebin:$PATH" "$X" -C "$d" submit v3 --no-chain >/dev/null 2>&1
check "the silent failure left a job in Slurm" test "$(all_jobs_named v3)" = 1
u next >/dev/null 2>&1
check "next adopted it instead of submitting again" test "$(all_jobs_named v3)" = 1
check "the attempt knows its job" sh -c "[ \"\$(runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status v3 --json | grep -c '\"phase\": \"submitted\"')\" -ge 1 ]"

# 4. killed after the verdict was stored, before decisions.md: the entry is repaired
step "open the gate" open_gate all
check "the first runs end" wait_idle
expect_rc 137 "killed after storing a verdict" crash verdict-after-db judge
n1=$(grep -c '^## .* attempt' "$d/ops/decisions.md")
u judge >/dev/null 2>&1
n2=$(grep -c '^## .* attempt' "$d/ops/decisions.md")
check "the missing decision entries were written ($n1 -> $n2)" test "$n2" -gt "$n1"
for t in v1 v2 v3; do
	check "one decision entry for $t's last attempt" test \
		"$(grep -c "^## .* · $t attempt" "$d/ops/decisions.md")" -ge 1
done
check "no entry written twice" sh -c "[ -z \"\$(grep '^## .* attempt' '$d/ops/decisions.md' | sed 's/^## [0-9-]* [0-9:]* · //' | sort | uniq -d)\" ]"

# 5. killed between writing decisions.md and committing it: the next decision commits it
expect_rc 137 "killed before committing decisions.md" crash decide-after-write decide "first thought"
check "the entry is in the file" grep -q 'first thought' "$d/ops/decisions.md"
step "decide second thought" u decide "second thought" >/dev/null
check "the next commit carries both entries" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- git -C '$d' show HEAD:ops/decisions.md | grep -q 'first thought' &&
	 runuser -u '$XLOOP_TEST_USER' -- git -C '$d' show HEAD:ops/decisions.md | grep -q 'second thought'"
check "the DB still opens cleanly" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status >/dev/null"

# 6. 20 ticks at once with one free slot: exactly one submission, no lock errors
step "plan add V=7 V=8 V=9" u plan add V=7 V=8 V=9 --from base >/dev/null
wait_idle
u judge >/dev/null 2>&1
before=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c 'JobName=V-')
for i in $(seq 1 20); do
	(as_user "$X" -C "$d" tick >"$T_TMP/tick$i.out" 2>&1; echo $? >"$T_TMP/tick$i.rc") &
done
wait
after=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c 'JobName=V-')
check "20 concurrent ticks submitted exactly one job ($before -> $after)" test "$((after - before))" = 1
check "no 'database is locked' reached the user" sh -c "! cat '$T_TMP'/tick*.out | grep -qi 'locked'"
check "the ticks that found the lock held exited 75" sh -c \
	"[ \$(cat '$T_TMP'/tick*.rc | grep -c '^75$') -ge 1 ] && [ \$(cat '$T_TMP'/tick*.rc | grep -vc '^\(0\|75\)$') = 0 ]"
check "tick.log has a line per tick that ran" test -s "$d/.xloop/tick.log"

# 7. the controller unreachable: 75, one line, nothing changed; the next tick catches up
# (the client gives up after MessageTimeout, 2 s here, not 10: the same
# "connect failure", sooner)
step "down.conf" sed -e 's/^SlurmctldPort=.*/SlurmctldPort=1/' -e '/^MessageTimeout=/d' "$SLURM_CONF" >"$T_TMP/down.conf"
step "down.conf: MessageTimeout" sh -c "echo MessageTimeout=2 >>'$T_TMP/down.conf'"
step "chmod 644 down.conf" chmod 644 "$T_TMP/down.conf"
wait_idle
# the tick itself is logged (status's feeder.last_at): the rest must not change
st() { as_user "$X" -C "$d" status --json | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); d.pop("feeder"); print(json.dumps(d))' | md5sum; }
h=$(st)
out=$(runuser -u "$XLOOP_TEST_USER" -- env SLURM_CONF="$T_TMP/down.conf" "$X" -C "$d" tick 2>&1)
rc=$?
check "tick with the controller down exits 75" test "$rc" = 75
check "with one line" test "$(printf '%s\n' "$out" | wc -l)" = 1
check "and changes nothing" test "$h" = "$(st)"
out=$(u tick 2>&1)
check "the next tick catches up (judges and feeds)" sh -c "printf '%s' '$out' | grep -q 'V-'"

# 8. a RUNNING job whose log went silent is flagged stale, notified once
# (it runs until the scancel after section 9: "held" waits behind it there;
# a 30 s one once ended first on a loaded machine, and "held" started)
step "new quiet --from base --set" u new quiet --from base --set SLEEP=110 >/dev/null
wait_idle
step "submit quiet --no-chain" u submit quiet --no-chain >/dev/null
for i in $(seq 1 120); do
	[ "$(as_user squeue -h -n quiet -u "$XLOOP_TEST_USER" -o %T)" = RUNNING ] && break
	sleep 0.5
done
sleep 4
out1=$(as_user env XLOOP_TEST_STALE_SECS=3 "$X" -C "$d" tick 2>&1)
out2=$(as_user env XLOOP_TEST_STALE_SECS=3 "$X" -C "$d" tick 2>&1)
check "tick flags the silent RUNNING job" grep -q 'quiet: job .* RUNNING but its log has been silent' <<<"$out1"
check "and says it only once" test -z "$(grep 'silent' <<<"$out2")"
as_user env XLOOP_TEST_STALE_SECS=3 "$X" -C "$d" next >"$T_TMP/stale.txt" 2>&1
check "the briefing marks it STALE with the fix" grep -q 'STALE: .*xloop cancel quiet' "$T_TMP/stale.txt"
out3=$(u next 2>&1)
check "with the default stale_after (15 min) it is not stale" test -z "$(grep STALE <<<"$out3")"

# 9. a pending job that will not start by itself (held) is flagged at once, once
step "new held --from base --set" u new held --from base --set SLEEP=1 >/dev/null
step "submit held" u submit held >/dev/null
hid=$(as_user squeue -h -n held -u "$XLOOP_TEST_USER" -o %i)
as_user scontrol hold "$hid"
sleep 1
u judge >/dev/null 2>&1
out4=$(u tick 2>&1)
out5=$(u tick 2>&1)
check "tick flags the held job as stuck" grep -q "held: job $hid is stuck pending (JobHeldUser)" <<<"$out4"
check "the stuck alert names the fix" grep -q 'scontrol release' <<<"$out4"
check "and says it only once" test -z "$(grep 'stuck' <<<"$out5")"
as_user scancel "$hid"

# 11. autopilot killed at each step of a proposal: the proposal is finished
# once, never made twice (its DB intent is written before its run)
a=$(user_dir)
ua() { as_user "$X" -C "$a" "$@"; }
new_study "$a" ap 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="")
c["queue"]["depth"] = 0'
step "adopt base" ua adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "space set V" ua space set V=0..8:int >/dev/null
step "auto on --budget-runs 6" ua auto on --budget-runs 6 >/dev/null
runs_of() { ls "$a/runs/ap" | wc -l; }
jobs_in() { as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$a " | grep -c "JobName=$1 "; }
wait_ap() {
	local i
	for i in $(seq 1 60); do
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z' | grep -F " $a")" ] && return 0
		sleep 1
	done
}
# create-after-files: the run's directory is made, the DB has no run;
# decide-after-write: an entry (a verdict's or the proposal's) is in the
# file, the DB does not know it: it is not written again;
# submit-after-intent: the attempt never reached Slurm: once reconcile
# marks it so (XLOOP_TEST_ORPHAN_SECS=0 instead of 2 min), it is submitted again
for point in auto-after-intent create-after-files auto-after-run auto-after-created decide-after-write submit-after-intent; do
	before=$(runs_of)
	expect_rc 137 "tick killed at $point" as_user env XLOOP_CRASH_AT="$point" "$X" -C "$a" tick
	as_user env XLOOP_TEST_ORPHAN_SECS=0 "$X" -C "$a" tick >/dev/null 2>&1
	check "after $point: exactly one new run" test "$(runs_of)" = "$((before + 1))"
	tag=$(ls -t "$a/runs/ap" | head -1)
	check "after $point: one Slurm job for $tag" test "$(jobs_in "$tag")" = 1
	check "after $point: one decision entry for $tag" test \
		"$(grep -c "^## .* · autopilot proposes $tag\$" "$a/ops/decisions.md")" = 1
	wait_ap
done
check "autopilot's budget holds after the crashes (6 runs)" test "$(runs_of)" = 7
check "no verdict entry written twice" sh -c "[ -z \"\$(grep '^## .* attempt [0-9]*: ' '$a/ops/decisions.md' | sed 's/^## [0-9-]* [0-9:]* · //' | sort | uniq -d)\" ]"
check "no two runs of one configuration" sh -c \
	"grep -h '^V=' '$a'/runs/ap/*/job.sh | sort | uniq -d | wc -l | grep -qx 0"

# 10. the only node drained: the stuck alert carries sinfo -R's reason
if [ "$(id -u)" -eq 0 ]; then
	node=$(hostname -s)
	trap 'scontrol update nodename="$node" state=resume >/dev/null 2>&1; rm -rf "$T_TMP"' EXIT
	wait_idle
	scontrol update nodename="$node" state=drain reason="disk almost full"
	step "new drained" u new drained --from base --set V=10 >/dev/null
	step "submit drained" u submit drained --no-chain >/dev/null
	sleep 2
	u judge >/dev/null 2>&1
	out6=$(u tick 2>&1)
	reason=$(as_user squeue -h -n drained -u "$XLOOP_TEST_USER" -o %r)
	scontrol update nodename="$node" state=resume
	case $reason in
	ReqNodeNotAvail* | NodeDown* | "Nodes required"*)
		check "a node-blocked job's alert names the drain reason" grep -q "Nodes: $node: disk almost full" <<<"$out6" ;;
	*)
		skip "drain reason in the alert" "Slurm gave '$reason', not a node reason" ;;
	esac
fi

finish
