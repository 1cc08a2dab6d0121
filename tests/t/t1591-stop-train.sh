#!/usr/bin/env bash
# Early stop on a real training loop, with the driver alone (issue 45):
# the example study's PyTorch network (runs/digits-mlp/base/job.sh) on the
# digits, on the CPU, driver.mode slurm: after the submits no xloop command
# runs until the verdicts are in (the feeder jobs judge). Each job reports
# its epochs in $XLOOP_RUN_DIR/progress and checkpoints every epoch; every
# run has an afterok evaluation step. A learning rate that makes the loss
# NaN stops at epoch 1 (within two) and is judged "stopped early", its step
# never runs; a good run is not stopped and its step runs; a segmented run
# that Slurm's signal (USR2, sent here with scancel) sends to its second
# segment after epoch 2 goes on from its checkpoint, `xloop stop` stops it
# at its own epoch 3 (not the segment's first), and its step never runs.
# Issue 46's rule, on the real curves: with good and a replicate on
# another seed proven (the best, and the seed noise at each epoch), a
# plainly worse learning rate is stopped by its stop bar after the warm-up
# (stop.warmup 2, stop.behind 2: at epoch 4), and one within the noise
# runs its 8 epochs, its curve never behind its bar.
# status counts the stops and the GPU-hours they saved; the report draws
# the stopped runs' curves (nan's NaN epoch a mark).
# Autopilot, given those values as its space, proposes none of them again.
# Barriers: each job waits after each epoch for the test's gate or for the
# stop record, never a sleep.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "stop on a real training loop" "run once, without accounting"
	finish
	exit
fi
if ! /usr/bin/python3 -c 'import torch, sklearn' 2>/dev/null; then
	skip "stop on a real training loop" "no python3-torch or python3-sklearn here"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
verdict() {	# verdict TAG: "VERDICT|REASON" of attempt 1, the reason up to its first ';'
	local v
	v=$(db "SELECT coalesce(t.verdict, '') || '|' || coalesce(t.verdict_reason, '') FROM attempt t
		JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 1" "$1")
	echo "${v%%;*}"
}
judged() { [ -n "$(db "SELECT t.verdict FROM attempt t JOIN run r ON r.id = t.run_id
	WHERE r.tag = ? AND t.n = 1" "$1")" ]; }
at_epoch() { grep -q "^epoch $2 " "$d/runs/st/$1/progress" 2>/dev/null; }
job_of() { db "SELECT t.job_id FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ?" "$1"; }
seg_started() { grep -q "^$2 start" "$d/runs/st/$1/slurm/attempt1.seg" 2>/dev/null; }

new_study "$d" st 'c["resources"].update(gres="", cpus=1, mem="1G", time="00:05:00")
c["queue"]["depth"] = 0
c["driver"]["mode"] = "slurm"
c["breaker"] = {"program": 0, "no_gpu": False}
c["stop"] = {"grace": 30, "warmup": 2, "behind": 2}
c["search"] = {"seed": "SEED"}
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}'

# the example's job.sh, each epoch's end a gate: it waits for the stop
# record, Slurm's signal, or the test's word (TAG: every epoch, TAG.eK: K)
mkdir -p "$T_GATES" && chmod 1777 "$T_GATES"
sed "s|^        # (the end of an epoch)\$|        while not (os.path.exists(stop_file) or go_on or any(os.path.exists(os.path.join('$T_GATES', g)) for g in (os.environ['XLOOP_TAG'], os.environ['XLOOP_TAG'] + '.e%d' % epoch))): time.sleep(0.2)|" \
	"$XLOOP_ROOT_DIR/runs/digits-mlp/base/job.sh" >"$T_TMP/job.sh"
check "the job waits at a gate after each epoch" grep -q "$T_GATES" "$T_TMP/job.sh"
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
# the evaluation: the training's cv.json, marked evaluated (the verdict
# reads the cv.json written by a run's last step)
touch "$XLOOP_RUN_DIR/eval-ran"
sed -i 's/}$/, "evaluated": true}/' "$XLOOP_RUN_DIR/cv.json"
JOB
echo '{"score": 0.9}' >"$T_TMP/cv.json"
step "chmod job.sh eval.sh cv.json" chmod 755 "$T_TMP/job.sh" "$T_TMP/eval.sh"
step "chmod cv.json" chmod 644 "$T_TMP/cv.json"
step "adopt base with an afterok eval step" u adopt "$T_TMP/job.sh" --tag base \
	--cv "$T_TMP/cv.json" --step eval="$T_TMP/eval.sh"
step "new nan (LR=1e10)" u new nan --from base --set LR=1e10
step "new good (LR=0.5)" u new good --from base --set LR=0.5
step "new seg (LR=0.1)" u new seg --from base --set LR=0.1
step "new good-r2 (LR=0.5, SEED=1: a replicate)" u new good-r2 --from good --set SEED=1 --force
step "submit nan" u submit nan --no-chain
step "submit good" u submit good --no-chain
step "submit seg in segments" u submit seg --no-chain --segments 3
open_gate good-r2
step "submit good-r2" u submit good-r2 --no-chain

# the NaN run stops at its first epoch; the good one goes on after it
check "nan reports its first epoch" wait_for 120 at_epoch nan 1
check "nan is stopped by its watcher" wait_for 60 test -e "$d/runs/st/nan/stopped"
check "the record: attempt 1, epoch 1, NaN" \
	grep -qx 'attempt 1 epoch 1 the value is NaN' "$d/runs/st/nan/stopped"
check "good reports its first epoch" wait_for 120 at_epoch good 1
open_gate good
# seg: epoch 1, epoch 2, then Slurm's signal before the time limit
check "seg reports its first epoch" wait_for 120 at_epoch seg 1
open_gate seg.e1
check "seg reports its second epoch" wait_for 60 at_epoch seg 2
step "USR2 to seg's batch shell (the time limit's warning)" \
	as_user scancel --signal=USR2 --batch "$(job_of seg)"
check "seg's second segment resumes at epoch 3" wait_for 120 at_epoch seg 3
u stop seg >"$T_TMP/stop.txt" 2>&1
check "xloop stop seg" grep -q "asked seg" "$T_TMP/stop.txt"

# no xloop call: the feeder jobs judge
for t in nan good seg good-r2; do
	check "$t is judged by the feeder" wait_for 180 judged "$t"
done
check "nan stopped early at epoch 1 (NaN)" \
	test "$(verdict nan)" = "stopped|stopped early at epoch 1 (the value is NaN)"
check "nan's verdict says what the stop saved" \
	eval '[[ "$(db "SELECT verdict_reason FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ?" nan)" == \
		*"; 7 of 8 planned epochs not run"* ]]'
check "good succeeded, not stopped" eval '[[ "$(verdict good)" == "success|COMPLETED 0:0, score 0."* ]]'
check "good ran its 8 epochs" at_epoch good 8
check "good's evaluation step ran" test -e "$d/runs/st/good/eval-ran"
check "nan's evaluation step did not run" test ! -e "$d/runs/st/nan/eval-ran"
check "seg went on from its checkpoint in segment 2" \
	grep -q "resumed from the checkpoint of epoch 2" "$d/runs/st/seg/slurm/attempt1.out"
check "seg stopped early at its own epoch 3 (xloop stop)" \
	test "$(verdict seg)" = "stopped|stopped early at epoch 3 (you asked (xloop stop))"
check "seg's record names epoch 3" grep -qx 'attempt 1 epoch 3 you asked (xloop stop)' \
	"$d/runs/st/seg/stopped"
check "seg's third segment never ran" eval '! seg_started seg 3'
check "seg's evaluation step did not run" test ! -e "$d/runs/st/seg/eval-ran"
check "seg's cv.json has its last accuracy" \
	test "$(db "SELECT t.score > 0.5 FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'seg'")" = 1

# issue 46: behind the best by more than the noise, on the real curves.
# good and good-r2 (LR=0.5 on two seeds) are the best, their two curves
# the noise at each epoch; a run from good gets its bar at submit
# (stop.warmup 2, stop.behind 2, the default noise_z). LR=0.005, plainly
# worse (0.35 at epoch 3 where the best has 0.92), stops at epoch 4, where
# its job waits; LR=0.4, within the noise, runs its 8 epochs (its job waits
# at epoch 8 until the worse one is judged)
check "good-r2, the replicate, succeeded" eval '[[ "$(verdict good-r2)" == "success|"* ]]'
step "new worse (LR=0.005)" u new worse --from good --set LR=0.005
step "new within (LR=0.4)" u new within --from good --set LR=0.4
for e in 1 2 3; do open_gate worse.e$e; done
for e in 1 2 3 4 5 6 7; do open_gate within.e$e; done
step "submit worse" u submit worse --no-chain
step "submit within" u submit within --no-chain
check "worse's bar, written at submit: epochs 3 to 8, none in the warm-up" \
	test "$(awk '$1 == "bar" { printf "%s ", $2 }' "$d/runs/st/worse/stop-bar")" = "3 4 5 6 7 8 "
check "worse is judged" wait_for 180 judged worse
check "worse stopped early at epoch 4, behind the best by more than the noise" \
	test "$(verdict worse)" = "stopped|stopped early at epoch 4 (behind the best by more than the noise at 2 epochs running)"
check "  its job ended at epoch 4" eval 'at_epoch worse 4 && ! at_epoch worse 5'
open_gate within.e8
check "within is judged" wait_for 180 judged within
check "within, inside the noise, ran its 8 epochs" \
	eval '[[ "$(verdict within)" == "success|COMPLETED 0:0, score 0."* ]] && at_epoch within 8'
# its whole curve against its bar, whenever the watcher looked
check "  no epoch of its curve is behind its bar" test "$(awk '
	FILENAME ~ /stop-bar$/ && $1 == "bar" { bar[$2] = $3; n++ }
	FILENAME ~ /progress$/ && $1 == "epoch" && ($2 in bar) { seen++; if ($3 + 0 < bar[$2] + 0) behind++ }
	END { print n + 0, seen + 0, behind + 0 }' "$d/runs/st/within/stop-bar" "$d/runs/st/within/progress")" = "6 6 0"

# status counts the stops and what they saved
u status >"$T_TMP/status.txt" 2>&1
check "status: 3 stopped early, with the GPU-hours saved" \
	grep -q "^study st: 7 runs, 3 stopped early (about [0-9.e-]* GPU-hours saved)" "$T_TMP/status.txt"
u status --json >"$T_TMP/status.json"
validates "status --json validates" status "$T_TMP/status.json"
check "  status --json: stopped_early.runs is 3" \
	test "$(jget .stopped_early.runs <"$T_TMP/status.json")" = 3

# the report draws each stopped run's curve beside the best's
step "report" u report --out "$d/report.html"
check "the report's 'Stopped early' section draws the three stopped runs" \
	test "$(grep -c '<figure class="curve">' "$d/report.html")|$(grep -c 'id="stopped"' "$d/report.html")" = "3|1"
check "  nan's NaN epoch as a mark, seg's curve as a line" \
	eval 'grep -q "<title>epoch 1: NaN</title>" "$d/report.html" && grep -q "class=\"crun\" d=\"M" "$d/report.html"'
check "  with the verdict's reason" grep -q "<b>seg</b>: stopped early at epoch 3 (you asked (xloop stop))" "$d/report.html"

# autopilot: every value of the space was run; the stopped ones are explored
step "space LR" u space set LR=0.2,0.1,0.5,1e10,0.005,0.4
step "auto on" u auto on --budget-runs 2 >"$T_TMP/auto.txt"
u next >"$T_TMP/next.txt" 2>&1
# (the seed variable makes it confirm the best on the baseline's seeds)
check "autopilot proposes no stopped configuration again: one run, a replicate on a seed" \
	test "$(db "SELECT count(*) || '|' || coalesce(sum(var != 'SEED'), 0) FROM run
		WHERE id > (SELECT id FROM run WHERE tag = 'within')")" = "1|0"
finish
