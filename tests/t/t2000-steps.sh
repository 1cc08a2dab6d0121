#!/usr/bin/env bash
# Runs with steps (issue 28) on the real cluster: `adopt --step eval=eval.sh`
# copies and commits every step, refuses a variable assigned in two; `new`
# changes the step that holds the variable. Each step is its own job,
# afterok on the step before; one strict verdict: a training that fails
# (its evaluation dropped by Slurm, named "not run"), an evaluation that
# fails (named, its log tail), an infra failure of the evaluation retried
# alone; the next run chains on the first (GPU) step; kills at each step
# crash point leave one job per (attempt, step).
. "$(dirname "$0")/lib.sh"

X=${XLOOP_ASAN_BIN:-$XLOOP_BIN}
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }
node=$(sinfo -h -N -o %N | head -n1)
trap 'scontrol update nodename="$node" state=resume >/dev/null 2>&1
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

new_study "$d" st 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0
c["retry"].update(infra_max=1)
c["breaker"] = {"program": 0, "no_gpu": False}'

# the training: MODE fail fails; it leaves model.txt for the evaluation
cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
set -u
MODE=ok
LR=1
echo "START train step=$XLOOP_STEP lr=$LR gpu=${CUDA_VISIBLE_DEVICES:-none}"
while [ -e "@H@/hold-$XLOOP_TAG" ]; do sleep 0.5; done
[ "$MODE" = fail ] && { echo "Traceback: train boom"; exit 1; }
echo "$LR" >"$XLOOP_RUN_DIR/model.txt"
echo FINISHED
JOB
# the evaluation: its own resources, no GPU; EVAL fail fails, slow waits
# until the test lets it end (go-TAG: a barrier, not a sleep)
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --mem=50M
#SBATCH --time=00:15:00
#SBATCH --no-requeue
set -u
EVAL=ok
echo "START eval step=$XLOOP_STEP gpu=${CUDA_VISIBLE_DEVICES:-none} restarts=${SLURM_RESTART_COUNT:-0}"
[ -f "$XLOOP_RUN_DIR/model.txt" ] || { echo "no model.txt"; exit 3; }
case $EVAL in
fail) echo "Traceback: eval boom"; exit 1 ;;
slow) while [ ! -e "@H@/go-$XLOOP_TAG" ]; do sleep 0.5; done ;;
esac
python3 -c "import json; json.dump({'score': 1/(1+$(cat "$XLOOP_RUN_DIR/model.txt"))}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
cat >"$T_TMP/eval-lr.sh" <<'JOB'
#!/bin/bash
LR=2
echo "$LR"
JOB
# a training waits while the test holds it (hold-TAG): a barrier, not a sleep
step "the holds' directory in train.sh and eval.sh" sed -i "s|@H@|$T_TMP|" "$T_TMP/train.sh" "$T_TMP/eval.sh"
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh" "$T_TMP/eval-lr.sh"

# adopt: bad input is refused, nothing recorded
expect_rc 2 "a --step without NAME=SCRIPT is a usage error" u adopt "$T_TMP/train.sh" --tag base --step eval.sh
expect_rc 2 "the step name 'job' is job.sh's own" u adopt "$T_TMP/train.sh" --tag base --step job="$T_TMP/eval.sh"
expect_rc 66 "a missing step script" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/nope.sh"
u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval-lr.sh" >"$T_TMP/two.out" 2>&1
check "a variable assigned in two steps is refused (exit 65)" test $? = 65
check "the error names the variable and both steps" grep -q "LR is assigned in step 'job'.*and in step 'eval'" "$T_TMP/two.out"
check "nothing recorded: no run directory" test ! -e "$d/runs/st/base"
check "nothing recorded: no run in the DB" sh -c "! runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status base >/dev/null 2>&1"

u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh" --json >"$T_TMP/adopt.json"
check "adopt with a step" test $? = 0
validates "adopt --json validates" adopt "$T_TMP/adopt.json"
check "adopt --json lists the step" sh -c "/usr/bin/python3 -c 'import json,sys; assert json.load(sys.stdin)[\"steps\"] == [\"eval\"]' <'$T_TMP/adopt.json'"
check "the step's script is in the run's directory" cmp "$T_TMP/eval.sh" "$d/runs/st/base/eval.sh"
check "the step's script is executable" test -x "$d/runs/st/base/eval.sh"
check "the step's script is committed" sh -c "runuser -u '$XLOOP_TEST_USER' -- git -C '$d' ls-files --error-unmatch runs/st/base/eval.sh"

# new: every step copied, the one holding the variable changed
expect_rc 0 "new changes EVAL, held by the eval step" u new evfail --from base --set EVAL=fail --force
check "the eval step changed" grep -q '^EVAL=fail$' "$d/runs/st/evfail/eval.sh"
check "job.sh copied as it was" cmp "$d/runs/st/base/job.sh" "$d/runs/st/evfail/job.sh"
expect_rc 0 "new changes MODE, held by job.sh" u new trfail --from base --set MODE=fail --force
check "job.sh changed" grep -q '^MODE=fail$' "$d/runs/st/trfail/job.sh"
check "the eval step copied as it was" cmp "$d/runs/st/base/eval.sh" "$d/runs/st/trfail/eval.sh"
cfg() { db "SELECT config FROM run_config JOIN run ON run.id = run_id WHERE tag = ?" "$1"; }
check "the configuration covers the eval step" sh -c "printf '%s' \"\$1\" | grep -q '^EVAL=ok$'" _ "$(cfg base)"
check "and the changed step's value" sh -c "printf '%s' \"\$1\" | grep -q '^EVAL=fail$'" _ "$(cfg evfail)"
expect_rc 65 "a change the eval step already has is refused" u new same --from base --set EVAL=ok --force
u diff evfail >"$T_TMP/diff.txt" 2>&1
check "diff shows the changed line of the eval step" sh -c "grep -q '^+++ runs/st/evfail/eval.sh' '$T_TMP/diff.txt' && grep -q '^+EVAL=fail' '$T_TMP/diff.txt'"
expect_rc 0 "plan add takes a variable of the eval step" u plan add EVAL=other --from base
expect_rc 65 "plan add refuses a variable no step assigns" u plan add NOPE=1 --from base
expect_rc 0 "and the plan entry goes again" u plan rm 1

all_jobs_named() {	# this study's jobs, live or finished, from the controller's memory
	as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c "JobName=$1 "
}


# a two-step run that succeeds
expect_rc 65 "steps over segments are refused at submit (not supported yet)" u submit base --segments 2
check "the refused submit recorded no attempt" test "$(u status base --json | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["runs"][0]["attempts"]))')" = 0
expect_rc 0 "submit the two-step baseline" u submit base
drive
check "the baseline succeeded" test "$(att base verdict)" = success
check "its score is the evaluation's" test "$(att base score)" = 0.5
check "step 1 logged to attempt1.out" grep -q 'START train step=job' "$d/runs/st/base/slurm/attempt1.out"
check "step 2 logged to attempt1.eval.out, XLOOP_STEP=eval" grep -q 'START eval step=eval' "$d/runs/st/base/slurm/attempt1.eval.out"
check "the eval step asked for no GPU" grep -q 'gpu=none' "$d/runs/st/base/slurm/attempt1.eval.out"
check "two jobs ran for the two steps" test "$(all_jobs_named base)" = 2
as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep "JobName=base " | grep 'eval.sh' >"$T_TMP/evaljob.txt"
check "the eval job took its own memory (#SBATCH --mem=50M)" grep -q 'mem=50M' "$T_TMP/evaljob.txt"

# a training that fails: its evaluation is dropped, one verdict names it
expect_rc 0 "submit the failing training" u submit trfail
drive
check "the failing training is a failure" test "$(att trfail verdict)" = failure
check "the verdict names the training" sh -c "printf '%s' \"\$1\" | grep -q \"^step 1 'job': FAILED\"" _ "$(att trfail verdict_reason)"
check "the evaluation is 'not run: step 1 failed'" sh -c "printf '%s' \"\$1\" | grep -q \"'eval' not run: step 1 failed\"" _ "$(att trfail verdict_reason)"
check "the evaluation never ran" sh -c "! grep -q START '$d/runs/st/trfail/slurm/attempt1.eval.out' 2>/dev/null"

# an evaluation that fails: named, with its log tail
expect_rc 0 "submit the failing evaluation" u submit evfail
drive
check "the failing evaluation is a failure" test "$(att evfail verdict)" = failure
check "the verdict names the evaluation" sh -c "printf '%s' \"\$1\" | grep -q \"^step 2 'eval' ended FAILED\"" _ "$(att evfail verdict_reason)"
check "the class is program" test "$(att evfail class)" = program
check "the briefing shows the evaluation's log tail" grep -q '| Traceback: eval boom' "$T_TMP/brief.txt"

# the next run chains on the previous run's first step, not its evaluation
expect_rc 0 "new lr2" u new lr2 --from base --set LR=2
expect_rc 0 "new lr3" u new lr3 --from base --set LR=3
step "lr2's training is held" touch "$T_TMP/hold-lr2"
expect_rc 0 "submit lr2" u submit lr2
expect_rc 0 "submit lr3 behind it" u submit lr3
j2=$(att lr2 job_id)
dep=$(as_user scontrol show job -o "$(att lr3 job_id)" | grep -o 'Dependency=[^ ]*')
check "lr3 waits for lr2's first step ($dep)" sh -c "printf '%s' '$dep' | grep -q 'afterany:$j2'"
step "lr2's training goes on" rm "$T_TMP/hold-lr2"
drive
check "lr2 and lr3 succeeded" test "$(att lr2 verdict) $(att lr3 verdict)" = "success success"

# status, why, next and resume show which step runs or waits
expect_rc 0 "new watch" u new watch --from base --set EVAL=slow
expect_rc 0 "submit watch" u submit watch
for i in $(seq 1 60); do
	grep -q 'START eval' "$d/runs/st/watch/slurm/attempt1.eval.out" 2>/dev/null && break
	sleep 1
done
u next >/dev/null 2>&1
u status watch >"$T_TMP/st-watch.txt" 2>&1
check "status names the running step" grep -q "step 2 'eval' RUNNING, job" "$T_TMP/st-watch.txt"
u status >"$T_TMP/st-all.txt" 2>&1
check "status's table shows the running step, not 'judging'" grep -q "^ *watch .* eval:RUNNING " "$T_TMP/st-all.txt"
check "  and counts no run as ended" sh -c "! grep -q 'ended, not judged yet' '$T_TMP/st-all.txt'"
u status watch --json >"$T_TMP/st-watch.json"
validates "status --json validates" status "$T_TMP/st-watch.json"
check "status --json has the step" grep -q "\"step\": \"step 2 'eval' RUNNING" "$T_TMP/st-watch.json"
u why watch >"$T_TMP/why-watch.txt" 2>&1
check "why names the step" grep -q "step 2 'eval' RUNNING" "$T_TMP/why-watch.txt"
u why watch --json >"$T_TMP/why-watch.json" 2>&1
validates "why --json validates" why "$T_TMP/why-watch.json"
u resume >"$T_TMP/resume-watch.txt" 2>&1
check "resume names the step" grep -q "step 2 'eval' RUNNING" "$T_TMP/resume-watch.txt"
u next --json >"$T_TMP/next-watch.json" 2>&1
check "next --json validates with a step" sh -c "$V '$S/next.schema.json' <'$T_TMP/next-watch.json' && grep -q '\"step\": \"step 2' '$T_TMP/next-watch.json'"
# the GPU never waits for an evaluation: its training done, the run holds no
# place in the line, so queue.depth 0 has room for the next training
expect_rc 0 "plan a run while watch's evaluation runs" u plan add LR=7 --from base
u next --json >"$T_TMP/next-fed.json" 2>&1
check "next submits it while the evaluation still runs" sh -c "/usr/bin/python3 -c 'import json,sys; assert len(json.load(sys.stdin)[\"submitted\"]) == 1' <'$T_TMP/next-fed.json' && grep -q 'START eval' '$d/runs/st/watch/slurm/attempt1.eval.out' && ! grep -q FINISHED '$d/runs/st/watch/slurm/attempt1.eval.out'"
touch "$T_TMP/go-watch"
drive
check "watch succeeded" test "$(att watch verdict)" = success

# cancel while the evaluation runs: the evaluation's job is cancelled
expect_rc 0 "new cx (a slow evaluation)" u new cx --from watch --set LR=6
expect_rc 0 "submit cx" u submit cx
for i in $(seq 1 60); do
	grep -q 'START eval' "$d/runs/st/cx/slurm/attempt1.eval.out" 2>/dev/null && break
	u next >/dev/null 2>&1
	sleep 1
done
expect_rc 0 "cancel cx while its evaluation runs" u cancel cx
drive
check "the cancelled run failed, naming the cancelled step" sh -c "printf '%s' \"\$1\" | grep -q \"^step 2 'eval' ended CANCELLED\"" _ "$(att cx verdict_reason)"
check "the evaluation did not finish" sh -c "! grep -q FINISHED '$d/runs/st/cx/slurm/attempt1.eval.out'"

# kills at each step crash point: one job per (attempt, step) after recovery
# (each its own LR: a configuration made already is refused)
lr=20
for at in submit-after-sbatch steps-before-sbatch steps-after-sbatch; do
	tag=k-$at
	lr=$((lr + 1))
	expect_rc 0 "new $tag" u new "$tag" --from base --set LR=$lr
	expect_rc 137 "killed at $at" crash "$at" submit "$tag"
	# what the killed submit made runs and ends before any tick looks
	wait_for 120 ended "$tag" || echo "# $tag's jobs are still queued"
	drive
	check "after a kill at $at: two jobs, one per step" test "$(all_jobs_named "$tag")" = 2
	v=$(att "$tag" verdict)
	check "after a kill at $at: the run succeeded" test "$v" = success
	[ "$v" = success ] || echo "# $tag: $v: $(att "$tag" verdict_reason)"
done

# an infra failure of the evaluation is retried alone
if [ "$XLOOP_PROFILE" = accounting ]; then
	expect_rc 0 "new evslow (a slow evaluation)" u new evslow --from watch --set LR=4
	expect_rc 0 "submit evslow" u submit evslow
	for i in $(seq 1 60); do
		grep -q 'START eval' "$d/runs/st/evslow/slurm/attempt1.eval.out" 2>/dev/null && break
		u next >/dev/null 2>&1
		sleep 1
	done
	scontrol update nodename="$node" state=down reason="xloop test: node failure" >/dev/null
	sleep 3
	# killed right after the retry's intents are recorded, before its sbatch
	expect_rc 137 "killed at steps-retry-after-db" crash steps-retry-after-db next
	scontrol update nodename="$node" state=resume >/dev/null 2>&1
	touch "$T_TMP/go-evslow"	# the evaluation's retry may end
	drive 150
	check "the run is still attempt 1 and succeeded" test "$(att evslow n) $(att evslow verdict)" = "1 success"
	check "the training ran once" test "$(grep -c 'START train' "$d/runs/st/evslow/slurm/attempt1.out")" = 1
	check "three jobs: the training, the evaluation, its retry" test "$(all_jobs_named evslow)" = 3
	check "the evaluation's retry ran on the training's outputs" grep -q 'FINISHED' "$d/runs/st/evslow/slurm/attempt1.eval.out"
	check "the evaluation's log keeps the failed try above the retry" test "$(grep -c 'START eval' "$d/runs/st/evslow/slurm/attempt1.eval.out")" = 2
else
	skip "an infra failure of the evaluation, retried alone" "run once, with accounting"
fi
finish
