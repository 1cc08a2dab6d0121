#!/usr/bin/env bash
# nodes: 3
# A node lost under running runs, on the multi-node test cluster (issue 34;
# tests/one.sh --nodes 3 --gpus 2). Run a cannot be requeued (#SBATCH
# --no-requeue): its job ends NODE_FAIL, judged infra, and the automatic
# retry runs on another node with --exclude=<the lost node>. Run b can: Slurm
# requeues its job (same id) onto another node; it stays one attempt, its log
# keeps both starts (with xloop's restart line between them), status says
# restarts 1, and it is judged once, at its real end. Both attempts name
# their node in status --json. Order comes from barriers: the jobs wait for
# a file the test writes; states are polled with deadlines.
. "$(dirname "$0")/lib.sh"
need_nodes 3
if [ "${XLOOP_GPUS:-1}" -lt 2 ]; then
	skip "node loss" "needs 2 GPUs a node (tests/one.sh --nodes 3 --gpus 2)"
	finish
	exit
fi

X=$XLOOP_BIN
killed=
# the lost nodes come back, whatever happens to the test
trap 'for n in $killed; do start_node "$n" >/dev/null 2>&1; done
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --no-requeue
X=0
echo "START x=$X node=$SLURMD_NODENAME restart=${SLURM_RESTART_COUNT:-0} device=cpu"
while [ ! -e "$XLOOP_ROOT/go" ]; do sleep 0.3; done
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
sed '/--no-requeue/d' "$T_TMP/job.sh" >"$T_TMP/job-rq.sh"
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/job-rq.sh" "$T_TMP/cv.json"

a=$(user_dir) b=$(user_dir)
for s in a b; do
	d=${!s}
	new_study "$d" "n$s" 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["queue"]["depth"] = 0
c["retry"].update(infra_max=1)
c["breaker"] = {"program": 0, "no_gpu": False}'
	job=$T_TMP/job.sh
	[ $s = b ] && job=$T_TMP/job-rq.sh
	step "adopt a baseline ($s)" as_user "$X" -C "$d" adopt "$job" --tag base --cv "$T_TMP/cv.json"
	step "a run ($s)" as_user "$X" -C "$d" new r1 --from base --set X=1
	step "submit it ($s)" as_user "$X" -C "$d" submit r1 --no-chain
done


deadline=$((SECONDS + 30))
until [ -n "$(job_on "$a")" ] && [ -n "$(job_on "$b")" ]; do
	[ $SECONDS -lt $deadline ] || { not_ok "both runs start" "$(squeue -u "$XLOOP_TEST_USER")"; finish; exit 1; }
	sleep 0.3
done
read -r ja na <<<"$(job_on "$a")"
read -r jb nb <<<"$(job_on "$b")"
for s in a b; do as_user "$X" -C "${!s}" next >/dev/null 2>&1; done
killed=$(printf '%s\n' "$na" "$nb" | sort -u | tr '\n' ' ')
t0=$SECONDS
for n in $killed; do step "kill node $n" kill_node "$n"; done

# drive both studies until a's retry runs and b's job runs again
deadline=$((SECONDS + 90)) t_retry= t_requeue=
while [ $SECONDS -lt $deadline ]; do
	for s in a b; do as_user "$X" -C "${!s}" next >>"$T_TMP/brief-$s.txt" 2>&1; done
	[ -z "$t_retry" ] && [ "$(attempt_of "$a" 2 state)" = RUNNING ] && t_retry=$((SECONDS - t0))
	# xloop saw b's job running again (a later start, same id)
	[ -z "$t_requeue" ] && [ "$(attempt_of "$b" 1 restarts)" = 1 ] && t_requeue=$((SECONDS - t0))
	[ -n "$t_retry" ] && [ -n "$t_requeue" ] && break
	sleep 1
done
ok "node(s) $killed lost: a's retry ran ${t_retry:-never} s and b's requeued job ${t_requeue:-never} s after the loss"
check "a's job ended NODE_FAIL, judged infra" test "$(attempt_of "$a" 1 class)/$(attempt_of "$a" 1 last_seen)" = infra/NODE_FAIL
check "a's attempt 1 names the node it was lost on" test "$(attempt_of "$a" 1 node)" = "$na"
check "a's retry runs" test -n "$t_retry"
check "a's retry was submitted away from the lost node" grep -q -- "--exclude=$na" <<<"$(attempt_of "$a" 2 resources)"
check "Slurm excludes the node for a's retry" grep -q "ExcNodeList=$na " <<<"$(scontrol show job -o "$(attempt_of "$a" 2 job_id)")"
check "b's job runs again under its id, seen by xloop" test -n "$t_requeue" -a "$(attempt_of "$b" 1 job_id)" = "$jb"
check "b is still one attempt, not judged" test "$(attempt_of "$b" 2 n)/$(attempt_of "$b" 1 verdict)" = none/

# the nodes come back; the jobs may end
for n in $killed; do step "start node $n" start_node "$n"; done
killed=
touch "$a/go" "$b/go"
deadline=$((SECONDS + 40))
while [ $SECONDS -lt $deadline ] && [ -n "$(squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; do sleep 0.5; done
for s in a b; do as_user "$X" -C "${!s}" next >>"$T_TMP/brief-$s.txt" 2>&1; done
check "a's retry succeeded on another node" test "$(attempt_of "$a" 2 verdict)" = success -a "$(attempt_of "$a" 2 node)" != "$na"
check "b succeeded as one attempt" test "$(attempt_of "$b" 1 verdict)/$(attempt_of "$b" 2 n)" = success/none
check "b's status counts the restart" test "$(attempt_of "$b" 1 restarts)" = 1
check "b's verdict says Slurm started its job twice" grep -q "started its job 2 times" <<<"$(attempt_of "$b" 1 verdict_reason)"
blog=$(attempt_of "$b" 1 log)
check "b's log keeps both starts" test "$(grep -c '^START' "$blog")" = 2
check "b's log marks the restart" grep -q "^xloop: job $jb started again" "$blog"
check "b's first start's lines come before the mark" test "$(grep -n -m1 '^START' "$blog" | cut -d: -f1)" -lt "$(grep -n '^xloop: job' "$blog" | cut -d: -f1)"
check "status --json validates" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$b' status --json | /usr/bin/python3 '$(dirname "$0")/validate.py' '$XLOOP_ROOT_DIR/schemas/status.schema.json'"
finish
