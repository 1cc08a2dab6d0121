#!/usr/bin/env bash
# nodes: 3
# A segmented run whose node is lost (issue 34 item 3; tests/one.sh
# --accounting --nodes 3 --gpus 2). Its segment 1 saves a checkpoint and
# works on until its node goes down: the job ends NODE_FAIL (it may not be
# requeued) and its continuation, queued and held before the loss, redoes
# the segment from the checkpoint. That continuation must avoid the lost
# node as an attempt's retry does (--exclude): the node comes back before
# xloop releases it, and it is then the only node with a free GPU (jobs of
# the test fill the others), so a continuation that does not exclude it
# runs there at once. Order comes from barriers: the test takes the node
# down and brings it back; states are polled with deadlines.
. "$(dirname "$0")/lib.sh"
need_nodes 3
if [ "${XLOOP_GPUS:-1}" -lt 2 ]; then
	skip "a segment's lost node" "needs 2 GPUs a node (tests/one.sh --nodes 3 --gpus 2)"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
lost= fillers=
# the node comes back and the fillers end, whatever happens to the test
trap '[ -z "$lost" ] || scontrol update nodename="$lost" state=resume >/dev/null 2>&1
	for j in $fillers; do scancel "$j" 2>/dev/null; done
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

new_study "$d" sl 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["queue"]["depth"] = 0
c["retry"].update(infra_max=1)
c["segments"] = {"max": 2, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --no-requeue
X=0
ck="$XLOOP_RUN_DIR/checkpoint"
echo "START x=$X node=$SLURMD_NODENAME segment=$XLOOP_SEGMENT from=$(cat "$ck" 2>/dev/null || echo 0) device=cpu"
if [ ! -e "$ck" ]; then
	echo 1 >"$ck"
	while :; do sleep 0.3; done	# until its node is lost
fi
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt a baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "a run" u new r1 --from base --set X=1 >/dev/null
expect_rc 0 "submit it (segment 2 queued, held)" u submit r1 --no-chain
check "segment 1 runs and saved its checkpoint" wait_for 60 eval '[ -n "$(job_on "$d")" ] && [ -s "$d/runs/sl/r1/checkpoint" ]'
read -r j1 n1 <<<"$(job_on "$d")"
j2=$(db "SELECT job_id FROM segment WHERE k = 2")
part=$(scontrol show job -o "$j1" | grep -o 'Partition=[^ ]*' | cut -d= -f2)
# every GPU of the other nodes taken: the lost node will be the only free one
for n in $(sinfo -h -N -p "$part" -o %N | sort -u); do
	[ "$n" = "$n1" ] && continue
	f=$(sbatch --parsable -p "$part" -w "$n" --gres="gpu:$XLOOP_GPUS" --mem=50M -t 5 -o /dev/null \
		--wrap "while [ -e '$T_TMP/fill' ]; do sleep 0.3; done")
	fillers="$fillers $f"
done
touch "$T_TMP/fill"
filled() { for f in $fillers; do scontrol show job -o "$f" | grep -q 'JobState=RUNNING' || return 1; done; }
# (what the controller saw, when a wait fails: its queue and its nodes)
say_cluster() {
	{
		squeue -a -o '%i %T %R %N %b'
		sinfo -N -o '%N %T %G %E'
	} 2>&1 | sed 's/^/# /'
}
check "the other nodes' GPUs are taken" wait_for 180 filled
filled || say_cluster

# the node is lost under segment 1, and back before xloop looks
lost=$n1
step "node $n1 down" scontrol update nodename="$n1" state=down reason="xloop test: node lost"
check "segment 1 ended NODE_FAIL" wait_for 60 sh -c "scontrol show job -o '$j1' | grep -q 'JobState=NODE_FAIL'"
check "  its continuation (job $j2) is still held" sh -c "scontrol show job -o '$j2' | grep -q 'Reason=JobHeldUser'"
# (refused once the node returned to service by itself)
resume() {
	scontrol update nodename="$n1" state=resume >/dev/null 2>&1
	node_state "$n1" | grep -qxE 'idle|mixed'
}
check "node $n1 is back" wait_for 60 resume
lost=

u next >>"$T_TMP/brief.txt" 2>&1
released() { u next >>"$T_TMP/brief.txt" 2>&1; ! scontrol show job -o "$j2" | grep -q 'Reason=JobHeldUser'; }
check "xloop released segment 2" wait_for 60 released
# what Slurm and xloop saw, when it was not (a CI run under load once
# waited here in vain, and for the run's end after it)
if scontrol show job -o "$j2" | grep -q 'Reason=JobHeldUser'; then
	{
		for j in "$j1" "$j2"; do
			scontrol show job -o "$j" 2>&1 | tr ' ' '\n' | grep -E '^(JobId|JobState|Reason|Dependency|Restarts|NodeList|ExitCode)='
		done
		sacct -n -P -X -j "$j1" -o JobID,State,ExitCode,NodeList,End 2>&1
		sql "$d/.xloop/state.db" "SELECT k, try, state, job_id, outcome FROM segment"
		sql "$d/.xloop/state.db" "SELECT n, state, missing_since, verdict FROM attempt"
		cat "$d/runs/sl/r1/slurm/attempt1.seg" 2>&1
		tail -n 20 "$T_TMP/brief.txt"
	} 2>&1 | sed 's/^/# /'
fi
check "  excluding the lost node" grep -q "ExcNodeList=$n1 " <<<"$(scontrol show job -o "$j2")"
# the scheduler looked at it: it runs, or it waits for a GPU (not on n1)
looked() {
	local l
	l=$(scontrol show job -o "$j2")
	grep -q 'JobState=RUNNING' <<<"$l" || ! grep -qE 'Reason=(None|JobHeldUser) ' <<<"$l"
}
check "  the scheduler looked at it" wait_for 180 looked
looked || { scontrol show job -o "$j2" | sed 's/^/# /'; say_cluster; }
check "  it does not run on the lost node, though that is back and the only free one" \
	sh -c "! scontrol show job -o '$j2' | grep -q 'JobState=RUNNING'"
check "  the event says so" test "$(db "SELECT count(*) FROM event WHERE kind = 'segment' AND detail LIKE '%job $j2, released, excluding $n1%'")" = 1

# a GPU elsewhere frees up: segment 2 goes on there from the checkpoint
rm -f "$T_TMP/fill"
done_() { u next >>"$T_TMP/brief.txt" 2>&1; [ "$(attempt_of "$d" 1 verdict)" = success ]; }
check "the run succeeds" wait_for 120 done_
check "  as one attempt" test "$(attempt_of "$d" 2 n)" = none
check "  segment 2 ran on another node" test -n "$(grep '^START .*segment=2 from=1' "$d/runs/sl/r1/slurm/attempt1.out" | grep -v "node=$n1 ")"
check "  status says segment 1 was done again" test "$(attempt_of "$d" 1 segments_redone)" = "segment 1 ended NODE_FAIL: segment 2 did its work again from the checkpoint"
finish
