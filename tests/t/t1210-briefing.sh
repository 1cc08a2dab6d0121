#!/usr/bin/env bash
# status, next and resume on the real cluster: a job that has left the
# queue is "ended, not judged yet", never RUNNING, and shows its elapsed
# time once judged; next says why it fed nothing (queue depth reached) and
# counts the sweep tasks still queued before saying the plan is empty;
# resume names what each queued job waits for (by job id and tag) and the
# study so far; no document says "None".
. "$(dirname "$0")/lib.sh"

# run once, in the plain profile: what they print comes from the DB and squeue, the same with accounting
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "status, next and resume" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" bt 'c["resources"].update(cpus=1, mem="200M", time="00:02:00")
c["queue"]["depth"] = 1
c["breaker"]["program"] = 0'

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
LR=1
SLEEP=6
echo "START lr=$LR device=cpu"
#GATE
sleep "$SLEEP"
python3 -c "import json; json.dump({'score': 1/(1+$LR)}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
# each job waits for the test's word: a job the test looks at as live stays
# live however busy the machine (open_gate)
step "gate_job job.sh" gate_job "$T_TMP/job.sh"
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"

# wait until squeue shows job $1 in state $2 ("" = gone)
job_is() { [ "$(as_user squeue -h -j "$1" -o %T 2>/dev/null)" = "$2" ]; }
wait_job() { wait_for 180 job_is "$1" "$2"; }

# 5: a job that left the queue is not RUNNING but judging, with its elapsed
# time; judged, it shows how long it ran
expect_rc 0 "a quick run" u new quick --from base --set SLEEP=2
step "submit quick --json" u submit quick --json >"$T_TMP/submit.json" 2>/dev/null
job=$(jget .job_id <"$T_TMP/submit.json")
check "quick starts" wait_job "$job" RUNNING
expect_rc 0 "judge while it runs (the DB records RUNNING)" u judge
step "open quick's gate" open_gate quick
check "quick leaves the queue" wait_job "$job" ""
u status >"$T_TMP/st1.txt" 2>&1
check "status: a job that left the queue is judging (waits for its verdict), not RUNNING" grep -Eq '^  quick +base +SLEEP 6->2 +judging ' "$T_TMP/st1.txt"
check "status: with its elapsed time so far (to its log's last write)" grep -Eq "^  quick +base +SLEEP 6->2 +judging +1 $job +~[0-9]+:[0-9]{2} +-\$" "$T_TMP/st1.txt"
check "status: and says it is not judged yet" grep -q '^1 run ended, not judged yet: `xloop judge`' "$T_TMP/st1.txt"
u status quick >"$T_TMP/st1q.txt" 2>&1
check "status T: ended, not judged yet" grep -q "^  attempt 1: ended, not judged yet, job $job" "$T_TMP/st1q.txt"
u status --json >"$T_TMP/st1.json" 2>/dev/null
check "status --json: state ended" test "$(jget .runs.1.state <"$T_TMP/st1.json")" = ended
validates "status --json validates" status "$T_TMP/st1.json"
expect_rc 0 "judge it" u judge
u status >"$T_TMP/st2.txt" 2>&1
check "status: a finished attempt shows its elapsed time" grep -Eq "^\\* quick +base +SLEEP 6->2 +success +1 $job +[0-9]+:[0-9]{2} +0\\.5\$" "$T_TMP/st2.txt"

# 6: why next fed nothing; who feeds next
expect_rc 0 "plan three changes" u plan add LR=0 LR=2 LR=3 --from base
u next --json >"$T_TMP/n1.json" 2>"$T_TMP/n1.err"
validates "next --json validates" next "$T_TMP/n1.json"
check "next submitted two (one runs, one waits)" test "$(jget .submitted <"$T_TMP/n1.json" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = 2
j0=$(jget .submitted.0.job_id <"$T_TMP/n1.json")
j1=$(jget .submitted.1.job_id <"$T_TMP/n1.json")
check "next --json: it stopped at the queue's depth" test "$(jget .feed.stopped <"$T_TMP/n1.json")" = depth
u next >"$T_TMP/n2.txt" 2>&1
check "next: fed nothing, the queue is full" grep -Eq "^fed nothing: the queue is full: [01] running and [12] waiting \(queue.depth 1\); the next job would chain behind job $j1\$" "$T_TMP/n2.txt"
check "next: nothing feeds after this session" grep -q '^after this session: nothing' "$T_TMP/n2.txt"
check "next: the waiting job waits for the running one" grep -q "^    waits for job $j0 (LR-0) to end" "$T_TMP/n2.txt"

# 9: resume for an agent with no memory
expect_rc 0 "a decision" u decide "LR matters most; try it first" --run base
u resume >"$T_TMP/r.txt" 2>&1
check "resume: the best lineage with scores" sh -c "grep -A2 '^  best lineage (root first):' '$T_TMP/r.txt' | tr -s ' ' | tr '\n' '|' | grep -q '^ best lineage (root first):| base (root) score 0.4| quick SLEEP: 6 -> 2 score 0.5|'"
check "resume: the queued job waits for job $j0 (LR-0)" grep -q "^  LR-2 attempt 1: job $j1 PENDING.*" "$T_TMP/r.txt"
check "resume: by job id and tag" sh -c "grep -A1 '^  LR-2 attempt 1' '$T_TMP/r.txt' | grep -q 'waits for job $j0 (LR-0) to end'"
check "resume: the latest decisions" grep -q '^      LR matters most; try it first' "$T_TMP/r.txt"
u resume --json >"$T_TMP/r.json" 2>/dev/null
validates "resume --json validates" next "$T_TMP/r.json"
check "resume --json: waits_for names the job" test "$(jget .live.1.waits_for.job_id <"$T_TMP/r.json") $(jget .live.1.waits_for.tag <"$T_TMP/r.json")" = "$j0 LR-0"
u status --json >"$T_TMP/st3.json" 2>/dev/null
validates "status --json with live jobs validates" status "$T_TMP/st3.json"
check "no document says \"None\"" sh -c "! grep -l '\"None\"' '$T_TMP'/*.json"

# every failure and its reason: cancel what is left
as_user scancel "$j0" "$j1"
check "the cancelled jobs leave the queue" wait_job "$j1" ""
u next >/dev/null 2>&1
as_user scancel -u "$XLOOP_TEST_USER" >/dev/null 2>&1
none_queued() { [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; }
check "every job of the test left the queue" wait_for 180 none_queued
u judge >/dev/null 2>&1
u resume >"$T_TMP/r2.txt" 2>&1
check "resume: every failure with its reason" sh -c "grep -q '^    LR-0 attempt 1 (program): CANCELLED' '$T_TMP/r2.txt' && grep -q '^    LR-2 attempt 1 (program): CANCELLED' '$T_TMP/r2.txt'"

# 6: sweep tasks are counted before "the plan is empty"
for id in $(u plan ls --json 2>/dev/null | python3 -c 'import json,sys; [print(e["id"]) for e in json.load(sys.stdin)["plan"]]'); do
	u plan rm "$id" >/dev/null 2>&1
done
step "sweep --set LR=4,5,6 --from base" u sweep --set LR=4,5,6 --from base --max-parallel 1 --json >"$T_TMP/sw.json" 2>"$T_TMP/sw.err"
check "a sweep of three, one at a time" test -s "$T_TMP/sw.json"
u next --json >"$T_TMP/n3.json" 2>/dev/null
check "next --json: the queued sweep tasks are counted" test "$(jget .feed.sweep_tasks_queued <"$T_TMP/n3.json")" -ge 2
check "next: with the plan empty it names the queued sweep tasks" grep -Eq '^nothing to decide now: [23] sweep tasks are still queued; the plan is empty' \
	<<<"$(jget .next_action.text <"$T_TMP/n3.json")"

finish
