#!/usr/bin/env bash
# Failure classes on the real cluster: the node taken down under a running
# job. A job Slurm requeues stays the same attempt and is not judged while
# it waits; a job that cannot be requeued ends NODE_FAIL (infra) and `next`
# retries it on its own, once, as a new attempt. Program failures are never
# retried. retry.auto_resources retries a TIMEOUT once with more time.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" != accounting ]; then
	skip "node failures" "run once, with accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
node=$(sinfo -h -N -o %N | head -n1)
# the node back up, whatever happens to the test
trap 'scontrol update nodename="$node" state=resume >/dev/null 2>&1
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
# the node is back by itself when slurmd registers again; resume is for safety
resume_node() { scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true; }

new_study "$d" inf 'c["resources"].update(cpus=1, mem="100M", time="00:01:00")
c["queue"]["depth"] = 0
c["retry"].update(infra_max=1, auto_resources=True)
c["breaker"] = {"program": 0, "no_gpu": False}'

# SLEEP is how long it works; 0 fails at once
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
SLEEP=8
echo "START sleep=$SLEEP restarts=${SLURM_RESTART_COUNT:-0} device=cpu"
sleep "$SLEEP"
[ "$SLEEP" = 0 ] && { echo "Traceback: boom"; exit 1; }
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a run to break the node under" u new norq --from base --set SLEEP=9

# wait until the job of a run is RUNNING
running() {
	local i
	for i in $(seq 1 60); do
		u status "$1" --json 2>/dev/null | grep -q '"state": "RUNNING"' && return 0
		u next >/dev/null 2>&1
		sleep 1
	done
	return 1
}
# drive next until none of our jobs is left
drive() {
	local i
	for i in $(seq 1 120); do
		u next >>"$T_TMP/brief.txt" 2>&1
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
		sleep 1
	done
	u next >>"$T_TMP/brief.txt" 2>&1
}
attempts() { u status --json | /usr/bin/python3 -c "import json,sys
r=[x for x in json.load(sys.stdin)['runs'] if x['tag']==sys.argv[1]][0]
print(' '.join('%d:%s:%s:%s' % (a['n'], a['verdict'] or '-', a['class'] or '-', a['auto_retry'] or '-') for a in r['attempts']))" "$1"; }

# sbatch reads SBATCH_NO_REQUEUE from the user's environment, as always
expect_rc 0 "submit it so that Slurm cannot requeue it" as_user env SBATCH_NO_REQUEUE=1 "$X" -C "$d" submit norq --no-chain
check "it runs" running norq
scontrol update nodename="$node" state=down reason="xloop test: node failure" >/dev/null
sleep 3
u next >"$T_TMP/after-down.txt" 2>&1
resume_node
check "the node failure is judged an infra failure" grep -q '^1:failure:infra:-' <<<"$(attempts norq)"
check "next retried it on its own as attempt 2" grep -q ' 2:-:-:infra' <<<"$(attempts norq)"
check "the briefing says it was retried" grep -q 'retry: infra NODE_FAIL' "$T_TMP/after-down.txt"
drive
check "the automatic retry succeeded" grep -q ' 2:success:-:infra$' <<<"$(attempts norq)"

# a job Slurm requeues is the same attempt: not judged while it waits
expect_rc 0 "a run Slurm may requeue" u new rq --from base --set SLEEP=10
expect_rc 0 "submit it" u submit rq --no-chain
check "it runs" running rq
scontrol update nodename="$node" state=down reason="xloop test: requeue" >/dev/null
sleep 3
u next >"$T_TMP/requeued.txt" 2>&1
resume_node
check "the requeued job is not judged" test "$(attempts rq)" = "1:-:-:-"
# Slurm holds a requeued job back (BeginTime: cred_expire + 1 s, two minutes
# here): once it is pending again, let it go now, not when the clock says
rqjob=$(db "SELECT t.job_id FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'rq'")
for i in $(seq 1 60); do
	[ "$(as_user squeue -h -j "$rqjob" -o %T 2>/dev/null)" = PENDING ] && break
	sleep 0.5
done
as_user scontrol update jobid="$rqjob" StartTime=now >/dev/null 2>&1

# while it runs again: program failures are never retried; a TIMEOUT is
# retried once with more time
expect_rc 0 "a run that fails" u new boom --from base --set SLEEP=0
expect_rc 0 "a run that times out" u new slow --from base --set SLEEP=300
expect_rc 0 "submit the failing one" u submit boom --no-chain
expect_rc 0 "submit the slow one with one minute" u submit slow --time 0:01:00 --no-chain
for i in $(seq 1 300); do
	u next >>"$T_TMP/brief2.txt" 2>&1
	attempts rq | grep -q '^1:-' || { attempts slow | grep -q '^1:failure' && break; }
	sleep 1
done
check "the requeued job finished as the same attempt" test "$(attempts rq)" = "1:success:-:-"
check "and it really ran twice" grep -q 'restarts=1' "$d/runs/inf/rq/slurm/attempt1.out"
check "the program failure is not retried" test "$(attempts boom)" = "1:failure:program:-"
check "the TIMEOUT was retried once with more time" grep -q '^1:failure:program:- 2:-:-:resources' <<<"$(attempts slow)"
check "with the time raised x1.5 to whole minutes" sh -c "u() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' \"\$@\"; }; u status slow --json | grep -q '\"resources\": \"--mem=100M --time=0:02:00\"'"
u cancel slow >/dev/null 2>&1
finish
