#!/usr/bin/env bash
# A slurmctld that comes back from an older saved state (issue 34, found by
# the multi-node soak): run a's segment 1 ends by itself and its wrapper
# cancels the held continuation (segment 2), xloop judges a and marks
# segment 2 unneeded; then slurmctld is SIGKILLed and starts from the state
# it saved before all that. Its segment 2 is pending and held again, and
# run b, chained behind it (afterany), would wait for it forever. The next
# tick must cancel every live job xloop is done with (by the token in its
# comment) so that b runs. The rollback is real: the state directory is
# copied after a clean stop, and put back after a SIGKILL. Order comes from
# barriers: the jobs wait at gates, b is held while the state is taken.
# Then run c's continuation leaves Slurm before it starts (cancelled from
# outside): when c's segment 1 asks to continue, xloop queues it again.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" != plain ]; then
	skip "a controller back from an older state" "run once, without accounting"
	finish
	exit
fi
TC=$XLOOP_ROOT_DIR/ops/slurm/testcluster.sh
STATE=${XLOOP_TESTCLUSTER_DIR:-/tmp/xloop-testcluster}/state/slurmctld
if [ ! -d "$STATE" ] || ! "$TC" status >/dev/null 2>&1; then
	skip "a controller back from an older state" "needs the test cluster of ops/slurm/testcluster.sh"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
# judged TAG: a tick, then whether run TAG's attempt has its verdict
judged() {
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ -n "$(db "SELECT t.verdict FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ?" "$1")" ]
}
# slurmctld runs again, whatever happens to the test (finish cancels its jobs)
trap '"$TC" start-daemon slurmctld >/dev/null 2>&1
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

new_study "$d" rb 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 1
c["segments"] = {"max": 2, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'
# never requeued by Slurm: a job the old state says runs ends, it does not rerun
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --no-requeue
X=0
echo "START x=$X device=cpu"
#GATE
# c (X=3) asks once to continue
if [ "$X" = 3 ] && [ ! -e "$XLOOP_RUN_DIR/checkpoint" ]; then echo 1 >"$XLOOP_RUN_DIR/checkpoint"; exit 85; fi
echo "{\"score\": $X}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "gate job.sh" gate_job "$T_TMP/job.sh"
step "adopt a baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "new a" u new a --from base --set X=1 >/dev/null
step "new b" u new b --from base --set X=2 >/dev/null
expect_rc 0 "submit a (segments: 2 queued held behind 1)" u submit a --no-chain
expect_rc 0 "submit b, chained behind a" u submit b
j1=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 'a' AND s.k = 1")
j2=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 'a' AND s.k = 2")
jb=$(db "SELECT t.job_id FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'b'")
check "b waits for a's segment 2 (job $j2)" test "$(db "SELECT t.after_job FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'b'")" = "$j2"
check "a's segment 1 runs, at its gate" wait_for 60 at_gate a
# b may not start between the two states: a held job stays held in both
step "hold b" as_user scontrol hold "$jb"
# the state slurmctld saves when it stops cleanly
step "stop slurmctld (it saves its state)" "$TC" kill-daemon slurmctld TERM
step "copy its state" cp -a "$STATE" "$T_TMP/ctld-state"
step "start slurmctld" "$TC" start-daemon slurmctld

# a ends by itself: its wrapper cancels segment 2; xloop judges a
open_gate a
check "a's wrapper cancelled segment 2" wait_for 60 grep -qx "2 cancelled $j2" "$d/runs/rb/a/slurm/attempt1.seg"
check "a is judged" wait_for 60 judged a
check "  a success, segment 2 unneeded" test "$(db "SELECT t.verdict || ' ' || s.state FROM attempt t JOIN run r ON r.id = t.run_id JOIN segment s ON s.attempt_id = t.id WHERE r.tag = 'a' AND s.k = 2")" = "success unneeded"

# slurmctld killed, back from the state saved before a ended
step "kill slurmctld" "$TC" kill-daemon slurmctld KILL
step "put its older state back" sh -c "rm -rf '$STATE' && cp -a '$T_TMP/ctld-state' '$STATE'"
step "start slurmctld" "$TC" start-daemon slurmctld
check "a's segment 2 is pending and held again" sh -c "scontrol show job -o '$j2' | grep -q 'JobState=PENDING.*Reason=JobHeldUser'"
step "release b" as_user scontrol release "$jb"
check "b waits for it" sh -c "scontrol show job -o '$jb' | grep -q 'JobState=PENDING.*Dependency=afterany:$j2'"

# a tick cancels what xloop is done with; b runs
u tick >>"$T_TMP/ticks.txt" 2>&1
check "a tick cancelled segment 2" wait_for 30 sh -c "scontrol show job -o '$j2' | grep -q 'JobState=CANCELLED'"
check "  and said so" test "$(db "SELECT count(*) FROM event WHERE kind = 'repaired' AND detail LIKE 'job $j2 (segment 2 of a attempt 1, unneeded) was PENDING again%'")" = 1
if ! wait_for 60 at_gate b; then
	not_ok "b runs" "$(scontrol show job -o "$jb")"
	finish
	exit 1
fi
ok "b runs"
open_gate b
check "b is judged" wait_for 60 judged b
check "b succeeded, a is still one success" test "$(db "SELECT group_concat(r.tag || t.n || ':' || t.verdict, ' ') FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag IN ('a', 'b') ORDER BY r.tag")" = "a1:success b1:success"

# c's continuation leaves Slurm before it starts (cancelled from outside
# here; the chaos soak lost one to a controller back from older state):
# once c's segment 1 asks to continue, xloop queues segment 2 again
step "new c" u new c --from base --set X=3 >/dev/null
expect_rc 0 "submit c (segment 2 queued, held)" u submit c --no-chain
jc2=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 'c' AND s.k = 2")
check "c's segment 1 runs, at its gate" wait_for 60 at_gate c
step "cancel its queued continuation (job $jc2)" scancel "$jc2"
check "  it left the queue" wait_for 30 sh -c "! squeue -h -o %i | grep -qx '$jc2'"
open_gate c
check "c is judged" wait_for 90 judged c
check "  a success: segment 2 queued again, it ran" test "$(db "SELECT t.verdict || ' ' || (SELECT group_concat(s.k || '.' || s.try || ':' || s.state, ' ') FROM (SELECT * FROM segment ORDER BY k, try) s WHERE s.attempt_id = t.id) FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'c'")" = "success 1.1:continued 2.1:submit_failed 2.2:last"
check "  and said so" test "$(db "SELECT count(*) FROM event WHERE kind = 'repaired' AND detail LIKE '%its continuation, job $jc2, left Slurm without starting: queued again'")" = 1
finish
