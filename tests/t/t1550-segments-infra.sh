#!/usr/bin/env bash
# An infra failure of a segment, on the real cluster. Slurm requeueing a
# segment restarts it as the same segment. The node taken down
# under a running segment that Slurm may not requeue (NODE_FAIL). It is
# retried as that segment: the next job continues from the checkpoint
# without the no-progress guard, does not count toward --segments and
# counts toward retry.infra_max. Past retry.infra_max the attempt fails
# (infra) and is retried automatically as a new attempt that keeps its
# --segments.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "segment node failures" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
# every sbatch of the test (segments queued by tick too) may not be requeued
u() { as_user env SBATCH_NO_REQUEUE=1 "$X" -C "$d" "$@"; }
node=$(sinfo -h -N -o %N | head -n1)
trap 'scontrol update nodename="$node" state=resume >/dev/null 2>&1
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
resume_node() { scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true; }
node_down() {
	scontrol update nodename="$node" state=down reason="xloop test: node failure" >/dev/null
	sleep 2
	u tick >>"$T_TMP/ticks.txt" 2>&1
	resume_node
}

new_study "$d" inf 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["retry"].update(infra_max=1)
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'

# each segment counts itself in the checkpoint, then works SLEEP seconds
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
SLEEP=1
ck="$XLOOP_RUN_DIR/checkpoint"
done=$(( $(cat "$ck" 2>/dev/null || echo 0) + 1 ))
echo "$done" >"$ck"
echo "START segment=$XLOOP_SEGMENT attempt=$XLOOP_ATTEMPT done=$done device=cpu"
sleep "$SLEEP"
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a run that needs one segment" u new r --from base --set SLEEP=15
ck=$d/runs/inf/r/checkpoint

# Slurm's own requeue (here by hand; a site requeues on NODE_FAIL or
# preemption) restarts the same job: the same segment, no continuation
expect_rc 0 "a run Slurm will requeue" u new q --from base --set SLEEP=12
expect_rc 0 "submit it with --segments 2 (requeue allowed)" as_user "$X" -C "$d" submit q --segments 2 --no-chain
qjob=$(db "SELECT job_id FROM attempt WHERE run_id = (SELECT id FROM run WHERE tag = 'q')")
for i in $(seq 1 30); do
	[ -s "$d/runs/inf/q/checkpoint" ] && [ "$(as_user squeue -h -j "$qjob" -o %T)" = RUNNING ] && break
	sleep 1
done
expect_rc 0 "scontrol requeue of the running segment" as_user scontrol requeue "$qjob"
sleep 2
# Slurm holds a requeued job back for a while (BeginTime): not here
as_user scontrol update jobid="$qjob" StartTime=now >/dev/null 2>&1
for i in $(seq 1 60); do
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u tick >>"$T_TMP/ticks.txt" 2>&1
check "the requeued segment ran again as itself and succeeded once" \
	test "$(db "SELECT group_concat(n || ':' || coalesce(verdict, '-'), ' ') FROM attempt WHERE run_id = (SELECT id FROM run WHERE tag = 'q')")" = "1:success"
check "  no continuation ran" test "$(db "SELECT group_concat(s.k || ':' || s.state, ' ') FROM segment s JOIN attempt t ON t.id = s.attempt_id WHERE t.run_id = (SELECT id FROM run WHERE tag = 'q')")" = "1:last 2:unneeded"
check "  the log shows segment 1 twice" test "$(grep -c '^==== xloop segment 1 ' "$d/runs/inf/q/slurm/attempt1.out")" = 2
check "  the second time from the checkpoint" grep -q 'segment=1 attempt=1 done=2' "$d/runs/inf/q/slurm/attempt1.out"
check "  the wrapper saw the TERM" grep -qx '1 term' "$d/runs/inf/q/slurm/attempt1.seg"

# until the attempt's current job runs and has counted itself to $1
working() {
	local i
	for i in $(seq 1 60); do
		[ "$(cat "$ck" 2>/dev/null)" = "$1" ] &&
			u status r --json 2>/dev/null | grep -q '"state": "RUNNING"' && return 0
		u tick >>"$T_TMP/ticks.txt" 2>&1
		sleep 1
	done
	return 1
}
segs() { db "SELECT group_concat(k || ':' || state || ':' || coalesce(outcome, '') || ':' || max, ' ') FROM (SELECT s.k, s.state, s.outcome, s.max FROM segment s JOIN attempt t ON t.id = s.attempt_id WHERE t.n = ? AND t.run_id = (SELECT id FROM run WHERE tag = 'r') ORDER BY s.k, s.try)" "$1"; }
att() { db "SELECT coalesce(verdict, '-') || ':' || coalesce(failure_class, '-') || ':' || coalesce(auto_retry, '-') || ':' || coalesce(overrides, '') FROM attempt WHERE n = ? AND run_id = (SELECT id FROM run WHERE tag = 'r')" "$1"; }

expect_rc 0 "submit it with --segments 1" u submit r --segments 1 --no-chain
check "segment 1 runs" working 1
node_down
check "segment 1's retry is queued" grep -q '^1:current::1 2:queued::' <<<"$(segs 1)"
check "  it does not count toward --segments (its max is 2)" \
	grep -q ' 2:[a-z]*::2$' <<<"$(segs 1)"
check "  no verdict" test "$(att 1)" = "-:-:-:--segments=1"
check "the retry runs from the checkpoint (no progress guard)" working 2
check "segment 1 ended NODE_FAIL and was retried as that segment" \
	grep -q '^1:continued:NODE_FAIL:1 2:current::2$' <<<"$(segs 1)"
check "  as the attempt's current job" test "$(db "SELECT job_id FROM attempt WHERE n = 1 AND run_id = (SELECT id FROM run WHERE tag = 'r')")" = "$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id WHERE t.n = 1 AND s.k = 2 AND t.run_id = (SELECT id FROM run WHERE tag = 'r')")"

# the second node failure is past retry.infra_max (1): the attempt fails
node_down
check "past retry.infra_max the attempt is one infra failure" grep -q '^failure:infra:-:' <<<"$(att 1)"
check "  from its last segment" grep -q '^1:continued:NODE_FAIL:1 2:last:NODE_FAIL' <<<"$(segs 1)"
check "it was retried automatically as attempt 2" grep -q '^-:-:infra:' <<<"$(att 2)"
check "  keeping its --segments" grep -q -- ' --segments=1$' <<<"$(att 2)"
check "  as a segmented attempt" grep -q '^1:' <<<"$(segs 2)"
for i in $(seq 1 90); do
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u tick >>"$T_TMP/ticks.txt" 2>&1
check "attempt 2 succeeded from the checkpoint" grep -q '^success:' <<<"$(att 2)"
check "  its segment saw the work done before" grep -q 'attempt=2 done=3' "$d/runs/inf/r/slurm/attempt2.out"
check "one header per segment that ran in attempt 1's log" \
	test "$(grep -c '^==== xloop segment' "$d/runs/inf/r/slurm/attempt1.out")" = 2

# a retry by hand keeps the --segments the latest attempt was given
expect_rc 0 "retry by hand" u retry r --no-chain
check "  keeps --segments 1" test "$(db "SELECT t.overrides || ':' || s.max FROM attempt t JOIN segment s ON s.attempt_id = t.id WHERE t.n = 3 AND s.k = 1 AND t.run_id = (SELECT id FROM run WHERE tag = 'r')")" = "--segments=1:1"
expect_rc 0 "cancel it" u cancel r
gone() {
	local i
	for i in $(seq 1 20); do
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && return 0
		sleep 1
	done
	return 1
}
check "  it leaves the queue" gone
u tick >/dev/null 2>&1
# cancel cancels the queued segment too: it must not start when the current one ends
expect_rc 0 "retry with --segments 3" u retry r --segments 3 --no-chain
seg2=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id WHERE t.n = 4 AND s.k = 2 AND t.run_id = (SELECT id FROM run WHERE tag = 'r')")
check "  its segment 2 is queued" test -n "$seg2"
expect_rc 0 "cancel it" u cancel r
check "  both leave the queue" gone
check "  segment 2 never ran" grep -q 'RunTime=00:00:00 ' <<<"$(as_user scontrol show job -o "$seg2")"
check "  and is marked so" test "$(db "SELECT state || ':' || outcome FROM segment WHERE job_id = ?" "$seg2")" = "unneeded:cancelled by the user"
u tick >/dev/null 2>&1
check "  the attempt is one CANCELLED failure" grep -q '^failure:' <<<"$(att 4)"

finish
