#!/usr/bin/env bash
# nodes: 3
# Preemption on the multi-node test cluster (issue 34; tests/one.sh --nodes 3
# --gpus 2): a run in the preemptible partition low (PreemptMode REQUEUE) is
# preempted by a job of partition gpu on its node: Slurm requeues it under
# the same id; it stays one attempt, its log keeps both starts, status and
# show count the restart, one verdict at its real end. A run in lowcancel
# (CANCEL) ends PREEMPTED: infra, retried as attempt 2. Never two live jobs
# of an attempt. Barriers: the jobs wait for files the test writes.
. "$(dirname "$0")/lib.sh"
need_nodes 3
if [ "${XLOOP_GPUS:-1}" -lt 2 ]; then
	skip "preemption" "needs 2 GPUs a node (tests/one.sh --nodes 3 --gpus 2)"
	finish
	exit
fi
X=$XLOOP_BIN
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
echo "START x=$X node=$SLURMD_NODENAME restart=${SLURM_RESTART_COUNT:-0} device=cpu"
while [ ! -e "$XLOOP_ROOT/go" ]; do sleep 0.3; done
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
preempt_pair p
deadline=$((SECONDS + 30))
until [ -n "$(job_on "$rq")" ] && [ -n "$(job_on "$cn")" ]; do
	[ $SECONDS -lt $deadline ] || { not_ok "both runs start" "$(squeue -u "$XLOOP_TEST_USER")"; finish; exit 1; }
	sleep 0.3
done
read -r jr nr <<<"$(job_on "$rq")"
read -r jc nc <<<"$(job_on "$cn")"
for s in rq cn; do as_user "$X" -C "${!s}" next >/dev/null 2>&1; done
# a job of partition gpu wants every GPU of their nodes: it preempts them
preempt_nodes "$nr" "$nc" >/dev/null
deadline=$((SECONDS + 60)) seen_rq= seen_cn=
while [ $SECONDS -lt $deadline ]; do
	for s in rq cn; do as_user "$X" -C "${!s}" next >>"$T_TMP/brief-$s.txt" 2>&1; done
	[ -z "$seen_cn" ] && [ "$(attempt_of "$cn" 1 last_seen)" = PREEMPTED ] && seen_cn=1
	[ -z "$seen_rq" ] && scontrol show job -o "$jr" | grep -q 'Restarts=1' && seen_rq=1
	[ -n "$seen_rq" ] && [ -n "$seen_cn" ] && break
	sleep 1
done
check "the CANCEL run ended PREEMPTED, infra" test "$(attempt_of "$cn" 1 last_seen)/$(attempt_of "$cn" 1 class)" = PREEMPTED/infra
check "it was retried as attempt 2" test "$(attempt_of "$cn" 2 auto_retry)" = infra
check "the REQUEUE run was requeued by Slurm (same job)" test -n "$seen_rq"
check "it is one attempt, not judged" test "$(attempt_of "$rq" 2 n)/$(attempt_of "$rq" 1 verdict)" = none/
# the preemptors end; the requeued job runs again, then every job may end
rm -f "$T_TMP/hold"
deadline=$((SECONDS + 60))
until [ "$(attempt_of "$rq" 1 restarts)" = 1 ]; do
	[ $SECONDS -lt $deadline ] || break
	as_user "$X" -C "$rq" next >>"$T_TMP/brief-rq.txt" 2>&1
	sleep 1
done
check "xloop saw the requeued job start again" test "$(attempt_of "$rq" 1 restarts)" = 1
touch "$rq/go" "$cn/go"
deadline=$((SECONDS + 40))
while [ $SECONDS -lt $deadline ] && [ -n "$(squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; do sleep 0.5; done
for s in rq cn; do as_user "$X" -C "${!s}" next >>"$T_TMP/brief-$s.txt" 2>&1; done
check "the requeued run succeeded once, as attempt 1" test "$(attempt_of "$rq" 1 verdict)/$(attempt_of "$rq" 2 n)/$(attempt_of "$rq" 1 job_id)" = "success/none/$jr"
rlog=$(attempt_of "$rq" 1 log)
check "its log keeps both starts" test "$(grep -c '^START' "$rlog")" = 2
check "its log marks the restart" grep -q "^xloop: job $jr started again" "$rlog"
check "show says Slurm restarted it" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='$SLURM_CONF' '$X' -C '$rq' show r1 | grep -q 'r1 .*\[.*\] (restarted 1 time by Slurm)'"
check "show --json counts the restart, and validates" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='$SLURM_CONF' '$X' -C '$rq' show r1 --json >'$T_TMP/show.json' &&
	/usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))[\"lineage\"][0][\"restarts\"] == 1 else 1)' '$T_TMP/show.json' &&
	/usr/bin/python3 '$XLOOP_ROOT_DIR/tests/t/validate.py' '$XLOOP_ROOT_DIR/schemas/show.schema.json' <'$T_TMP/show.json'"
check "the cancelled run's retry succeeded" test "$(attempt_of "$cn" 2 verdict)" = success
finish
