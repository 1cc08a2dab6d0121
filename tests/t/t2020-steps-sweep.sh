#!/usr/bin/env bash
# Sweeps of runs with steps (issue 28) on the real cluster: each later step
# runs as an array of its own, each task aftercorr on its own task of the
# step before (--kill-on-invalid-dep=yes), one verdict per task; a task
# whose training fails has its evaluation dropped by Slurm and a verdict
# naming the training; kills at each new crash point leave one job per
# (attempt, step).
. "$(dirname "$0")/lib.sh"

X=${XLOOP_ASAN_BIN:-$XLOOP_BIN}
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }

new_study "$d" st 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0
c["breaker"] = {"program": 0, "no_gpu": False}'

# the training fails for LR=bad; it leaves model.txt for the evaluation
cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
set -u
LR=1
echo "START train step=$XLOOP_STEP lr=$LR"
# a barrier the test lifts once it has read what waits on the training
while [ -e "@T@/hold-train" ]; do sleep 0.2; done
[ "$LR" = bad ] && { echo "Traceback: train boom"; exit 1; }
echo "$LR" >"$XLOOP_RUN_DIR/model.txt"
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --mem=50M
set -u
echo "START eval step=$XLOOP_STEP tag=$XLOOP_TAG gpu=${CUDA_VISIBLE_DEVICES:-none}"
[ -f "$XLOOP_RUN_DIR/model.txt" ] || { echo "no model.txt"; exit 3; }
python3 -c "import json; json.dump({'score': 1/(1+$(cat "$XLOOP_RUN_DIR/model.txt"))}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
# the --then summary: reads the results file, asks for no GPU
cat >"$T_TMP/summary.sh" <<'JOB'
#!/bin/bash
# (its wrapper runs the test's xloop, the ASan build, before this script:
# 30M ended it OUT_OF_MEMORY on a busy machine)
#SBATCH --mem=200M
echo "START summary step=$XLOOP_STEP sweep=$XLOOP_SWEEP gpu=${CUDA_VISIBLE_DEVICES:-none} cpus=$SLURM_CPUS_ON_NODE"
python3 -c "import json,os
d=json.load(open(os.environ['XLOOP_SWEEP_RESULTS']))
for t in d['tasks']: print('TASK', t['tag'], t['value'], t['verdict'], t['score'])"
echo FINISHED
JOB
step "the barrier in train.sh" sed -i "s|@T@|$T_TMP|" "$T_TMP/train.sh"
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh" "$T_TMP/summary.sh"
expect_rc 0 "adopt a two-step baseline" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh"

jobs_of() {	# this study's jobs named $1 with array index $2, from the controller's memory
	as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep "JobName=$1 " |
		grep -c "ArrayTaskId=$2 "
}

expect_rc 65 "a sweep of a run with steps over segments is refused" u sweep --set LR=2,bad --from base --force --name sg --segments 2
check "the refused sweep made no run" test ! -e "$d/runs/st/sg--LR-2"
expect_rc 66 "a missing --then script is refused" u sweep --set LR=2,bad --from base --force --name sw --then "$T_TMP/nope.sh"
check "the refused sweep made no run" test ! -e "$d/runs/st/sw--LR-2"
step "the training waits" touch "$T_TMP/hold-train"
expect_rc 0 "a sweep of a two-step run is submitted, with a --then summary" u sweep --set LR=2,bad --from base --force --name sw --then "$T_TMP/summary.sh"
ev=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep 'JobName=sw.eval ' | head -n1)
th=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep 'JobName=sw.then ' | head -n1)
evid=$(printf '%s' "$ev" | grep -o 'ArrayJobId=[0-9]*' | head -n1 | cut -d= -f2)
check "the evaluation is an array named sw.eval" test -n "$ev"
check "it waits aftercorr on the training's array" sh -c "printf '%s' \"\$1\" | grep -q 'Dependency=aftercorr:'" _ "$ev"
trid=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep 'JobName=sw ' | grep -o 'ArrayJobId=[0-9]*' | head -n1 | cut -d= -f2)
check "the summary waits afterany on the training array ($trid) and the evaluation array ($evid)" sh -c "printf '%s' \"\$1\" | grep -q 'Dependency=afterany:${trid}[(_].*afterany:${evid}[(_]'" _ "$th"
check "the summary asks for no GPU" sh -c "! printf '%s' \"\$1\" | grep -q 'gres/gpu'" _ "$th"
step "the training goes on" rm "$T_TMP/hold-train"
drive
check "the good task succeeded" test "$(att sw--LR-2 verdict)" = success
check "its score is its evaluation's" test "$(att sw--LR-2 score)" = "$(/usr/bin/python3 -c 'print(1/3)')"
check "its evaluation logged to attempt1.eval.out, XLOOP_STEP=eval" grep -q 'START eval step=eval tag=sw--LR-2' "$d/runs/st/sw--LR-2/slurm/attempt1.eval.out"
check "the evaluation asked for no GPU" grep -q 'gpu=none' "$d/runs/st/sw--LR-2/slurm/attempt1.eval.out"
check "the failed task is a failure" test "$(att sw--LR-bad verdict)" = failure
check "its verdict names the training" sh -c "printf '%s' \"\$1\" | grep -q \"^step 1 'job': FAILED\"" _ "$(att sw--LR-bad verdict_reason)"
check "its evaluation is 'not run: step 1 failed'" sh -c "printf '%s' \"\$1\" | grep -q \"'eval' not run: step 1 failed\"" _ "$(att sw--LR-bad verdict_reason)"
st1=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep 'JobName=sw.eval ' | grep 'ArrayTaskId=1 ' | grep -o 'JobState=[A-Z]*')
check "Slurm dropped its evaluation ($st1: the dependency can never be met)" test "$st1" = JobState=CANCELLED
check "its evaluation never ran" sh -c "! grep -q START '$d/runs/st/sw--LR-bad/slurm/attempt1.eval.out' 2>/dev/null"
check "one training and one evaluation per task" test "$(jobs_of sw 0) $(jobs_of sw.eval 0) $(jobs_of sw 1) $(jobs_of sw.eval 1)" = "1 1 1 1"
L=$d/.xloop/sweeps/sw/then.out
check "the summary ran, its log in the sweep's directory" grep -q "START summary step=then sweep=sw gpu=none cpus=1" "$L"
check "it read the results: the good task's verdict and score" grep -q "TASK sw--LR-2 2 success 0.333" "$L"
check "and the failed task's verdict" grep -q "TASK sw--LR-bad bad failure None" "$L"
u sweep show sw --json >"$T_TMP/show.json"
check "sweep show reports the summary's outcome" sh -c "/usr/bin/python3 -c 'import json,sys; t=json.load(sys.stdin)[\"then\"]; assert (t[\"state\"], t[\"exit_code\"]) == (\"COMPLETED\", \"0:0\"), t' <'$T_TMP/show.json'"
validates "sweep show --json validates" sweep-show "$T_TMP/show.json"
validates "the results file validates against the same schema" sweep-show "$d/.xloop/sweeps/sw/results.json"
u sweep show sw >"$T_TMP/show.txt" 2>&1
expect_rc 0 "report" u report --out "$d/r.html"
check "the timeline draws the evaluation as its own bar, named" grep -q "sw--LR-2 attempt 1, step 2 'eval': [0-9]* s, COMPLETED" "$d/r.html"
check "and the training as step 1 'job'" grep -q "sw--LR-2 attempt 1, step 1 'job'" "$d/r.html"
check "sweep show's text names it" grep -q "then: job [0-9]*, COMPLETED 0:0 (its outcome, not a run's verdict)" "$T_TMP/show.txt"

# kills at each new crash point: one job per (attempt, step) after recovery,
# and one --then step
n=0
for at in sweep-after-sbatch sweep-steps-before-array steps-array-before-sbatch \
	steps-array-after-sbatch sweep-then-before-submit sweep-then-before-sbatch sweep-then-after-sbatch; do
	n=$((n + 1))
	expect_rc 137 "killed at $at" crash "$at" sweep --set LR=$((n * 10)),$((n * 10 + 1)) --from base --force --name k$n --then "$T_TMP/summary.sh"
	# what the killed sweep made runs and ends before any tick looks
	wait_for 120 ended "k$n" || echo "# k$n's jobs are still queued"
	drive
	seen="$(jobs_of k$n 0) $(jobs_of k$n.eval 0) $(jobs_of k$n 1) $(jobs_of k$n.eval 1)"
	check "after a kill at $at: one training and one evaluation per task ($seen)" test "$seen" = "1 1 1 1"
	seen="$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c "JobName=k$n.then ") $(grep -c FINISHED "$d/.xloop/sweeps/k$n/then.out")"
	check "after a kill at $at: one --then step, it ran ($seen)" test "$seen" = "1 1"
	check "after a kill at $at: both tasks succeeded" test "$(att k$n--LR-$((n * 10)) verdict) $(att k$n--LR-$((n * 10 + 1)) verdict)" = "success success"
done
finish
