#!/usr/bin/env bash
# xloop watch on the real cluster: a pending job with its reason, a running
# job's progress line with the ETA it states or one estimated from "k/N",
# one line per change when not on a terminal, a redraw on a terminal, and
# the end when nothing is live.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "watch" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" w 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
STEPS=4
echo "START steps=$STEPS device=cpu"
for i in $(seq 1 $STEPS); do sleep 2; echo "step $i/$STEPS loss=0.$i"; done
sleep 2; echo "evaluating, ETA 7s"; sleep 2
echo '{"score": 1}' >"$XLOOP_RUN_DIR/cv.json"; echo FINISHED
JOB
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a run" u new r1 --from base --set STEPS=5
expect_rc 0 "another behind it" u new r2 --from base --set STEPS=3
expect_rc 0 "submit the first" u submit r1 --no-chain
expect_rc 0 "submit the second behind it" u submit r2
timeout 120 runuser -u "$XLOOP_TEST_USER" -- env SLURM_CONF="${SLURM_CONF:-}" \
	"$X" -C "$d" watch --every 1 >"$T_TMP/watch.txt" 2>&1
rc=$?
check "watch ended by itself when nothing was live" sh -c "[ $rc -eq 0 ] && tail -n1 '$T_TMP/watch.txt' | grep -q 'nothing is queued or running'"
check "the waiting job showed its reason" grep -Eq 'r2 +#1 job [0-9]+ +PENDING .*\(Dependency\)' "$T_TMP/watch.txt"
check "the running job showed its progress" grep -Eq 'r1 +#1 .* RUNNING .* step 2/5 loss=0.2' "$T_TMP/watch.txt"
check "with an ETA estimated from k/N" grep -Eq 'step [0-9]/5 loss=0\.[0-9]  ETA ~[0-9]+m[0-9]+s left' "$T_TMP/watch.txt"
check "a line that states its ETA as it is" grep -q 'evaluating, ETA 7s$' "$T_TMP/watch.txt"
check "one line per change, not per refresh" test "$(grep -c 'step 2/5 loss' "$T_TMP/watch.txt")" = 1
# on a terminal: the view is redrawn in place
expect_rc 0 "a third run" u new r3 --from base --set STEPS=2
expect_rc 0 "submit it" u submit r3 --no-chain
runuser -u "$XLOOP_TEST_USER" -- env SLURM_CONF="${SLURM_CONF:-}" \
	script -qec "$X -C $d watch --once" /dev/null >"$T_TMP/tty.txt" 2>&1
check "on a terminal it clears and redraws" sh -c "cat -v '$T_TMP/tty.txt' | grep -q '^\^\[\[H\^\[\[2Jxloop watch: study w, 1 live'"
u cancel r3 >/dev/null 2>&1
finish
