#!/usr/bin/env bash
# A run going nowhere stops, on the node, within an epoch (issue 45): each
# job reports its epochs in $XLOOP_RUN_DIR/progress; the stop watcher in
# its batch script stops the run that reports chance at epochs 1 and 2, and
# the one that reports NaN at epoch 2 (the job sees
# $XLOOP_RUN_DIR/stopped, writes cv.json and exits: COMPLETED), one a user
# stops with `xloop stop` at epoch 1, and one that ignores the stop (ended
# after stop.grace: not COMPLETED); each is judged "stopped early at epoch
# K (why)" from the watcher's record, neither success nor failure; a
# stopped run's afterok step does not run; a run stopped in its second
# segment is stopped at the job's own epoch, and its next segment never
# runs; a sweep's task is stopped the same way (its own verdict; its
# aftercorr step does not run) and the other task runs to its end. A
# healthy run and the baseline are not stopped; the baseline's and a
# retry's watcher have the rule off, and the retry of a stopped run runs
# to its end. No sleep orders anything: the jobs wait at gates.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "stop" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
verdict() {	# verdict TAG N: "VERDICT|REASON", the reason up to its first ';'
	local v
	v=$(db "SELECT coalesce(t.verdict, '') || '|' || coalesce(t.verdict_reason, '') FROM attempt t
		JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = ?" "$1" "$2")
	echo "${v%%;*}"
}
judged() {	# judged TAG N: attempt N of TAG has its verdict (a tick judges it)
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ "$(db "SELECT count(*) FROM attempt t JOIN run r ON r.id = t.run_id
		WHERE r.tag = ? AND t.n = ? AND t.verdict IS NOT NULL" "$1" "$2")" = 1 ]
}
at_epoch() { grep -q "^epoch $2 " "$d/runs/st/$1/progress" 2>/dev/null; }
token() { db "SELECT t.token FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = ?" "$1" "$2"; }
wrapper() { cat "$d/.xloop/watch/$(token "$1" "$2").sh"; }

new_study "$d" st 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["breaker"] = {"program": 0, "no_gpu": False}
c["stop"] = {"grace": 1}
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["search"] = {"seed": "SEED"}'

# three epochs of a value, at chance 0.1; after a NaN one (and each one
# of "user") the job waits for the test's gate or for the stop; the
# stubborn one only for the gate
mkdir -p "$T_GATES" && chmod 1777 "$T_GATES"
cat >"$T_TMP/train.sh" <<JOB
#!/bin/bash
set -u
MODE=base
G=$T_GATES
JOB
cat >>"$T_TMP/train.sh" <<'JOB'
p="$XLOOP_RUN_DIR/progress" last=0.1
if [ "$MODE" = segnan ]; then
	# segment 1: epoch 1, a checkpoint, "continue me"; segment 2: epoch 2 is NaN
	if [ ! -e "$XLOOP_RUN_DIR/checkpoint" ]; then
		echo "epoch 1 0.5" >>"$p"
		echo 1 >"$XLOOP_RUN_DIR/checkpoint"
		exit 85
	fi
	echo "epoch 2 nan" >>"$p"
	while [ ! -e "$XLOOP_RUN_DIR/stopped" ] && [ ! -e "$G/$XLOOP_TAG.$XLOOP_ATTEMPT" ]; do
		sleep 0.2
	done
	echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
	exit 0
fi
printf 'epochs 3\nchance 0.1\n' >>"$p"
for e in 1 2 3; do
	v=0.$((e + 4))
	[ "$MODE" = nan ] && [ "$e" -ge 2 ] && v=nan
	[ "$MODE" = stubborn ] && v=nan
	[ "$MODE" = chance ] && v=0.1
	echo "epoch $e $v" >>"$p"
	[ "$v" = nan ] || last=$v
	if [ "$MODE" = stubborn ]; then
		while [ ! -e "$G/$XLOOP_TAG.$XLOOP_ATTEMPT" ]; do sleep 0.2; done
	elif [ "$MODE" = user ] || [ "$v" = nan ] || { [ "$MODE" = chance ] && [ "$e" = 2 ]; }; then
		while [ ! -e "$XLOOP_RUN_DIR/stopped" ] && [ ! -e "$G/$XLOOP_TAG.$XLOOP_ATTEMPT" ]; do
			sleep 0.2
		done
	fi
	# told to stop: the last value into cv.json, and out
	[ -e "$XLOOP_RUN_DIR/stopped" ] && break
done
echo "{\"score\": $last}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
touch "$XLOOP_RUN_DIR/eval-ran"
echo '{"score": 0.9}' >"$XLOOP_RUN_DIR/cv.json"
JOB
step "chmod 755 train.sh eval.sh" chmod 755 "$T_TMP/train.sh" "$T_TMP/eval.sh"
step "adopt base" u adopt "$T_TMP/train.sh" --tag base
step "adopt sbase, with an afterok eval step" u adopt "$T_TMP/train.sh" --tag sbase \
	--step eval="$T_TMP/eval.sh"
for m in healthy nan user stubborn chance; do
	step "new $m" u new "$m" --from base --set MODE=$m --force
done
step "new snan" u new snan --from sbase --set MODE=nan --force
step "new segnan" u new segnan --from base --set MODE=segnan --force
for m in base healthy nan user stubborn snan chance; do
	step "submit $m" u submit "$m" --no-chain
done
step "submit segnan in segments" u submit segnan --no-chain --segments 3
# a sweep's tasks have their watchers too: from sbase (an eval step after
# each task, an array aftercorr), one at chance, one healthy
step "sweep sw: MODE=chance,healthy from sbase" u sweep --set MODE=chance,healthy --from sbase --force --no-chain \
	--name sw

# the user's stop, once its job reported epoch 1
check "user's job reports epoch 1" wait_for 60 at_epoch user 1
u stop user --json >"$T_TMP/stop.json" 2>"$T_TMP/stop.err"
check "xloop stop user exits 0" test -s "$T_TMP/stop.json"
validates "stop --json validates" stop "$T_TMP/stop.json"
expect_rc 66 "xloop stop of an unknown run is 66" u stop nosuch

for m in base healthy nan user stubborn snan segnan chance sw--MODE-chance sw--MODE-healthy; do
	check "$m is judged" wait_for 90 judged "$m" 1
done
check "base succeeded" test "$(verdict base 1)" = "success|COMPLETED 0:0, score 0.7"
check "healthy succeeded (never stopped)" test "$(verdict healthy 1)" = "success|COMPLETED 0:0, score 0.7"
check "nan stopped early at epoch 2 (NaN)" \
	test "$(verdict nan 1)" = "stopped|stopped early at epoch 2 (the value is NaN)"
check "chance stopped early at epoch 2 (two epochs at chance)" \
	test "$(verdict chance 1)" = "stopped|stopped early at epoch 2 (the value is at chance)"
check "user stopped early at epoch 1 (xloop stop)" \
	test "$(verdict user 1)" = "stopped|stopped early at epoch 1 (you asked (xloop stop))"
check "stubborn stopped early at epoch 1 though Slurm did not say COMPLETED" \
	test "$(verdict stubborn 1)|$(db "SELECT state != 'COMPLETED' FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'stubborn'")" = \
	"stopped|stopped early at epoch 1 (the value is NaN)|1"
check "nan's verdict says what the stop saved" \
	eval '[[ "$(db "SELECT verdict_reason FROM attempt WHERE token = ?" "$(token nan 1)")" == \
		*"; 1 of 3 planned epochs not run"* ]]'
check "nan's job stopped at epoch 2: cv.json has its last value" \
	test "$(db "SELECT t.score FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'nan'")" = 0.5
check "the record says attempt 1 epoch 2" grep -qx 'attempt 1 epoch 2 the value is NaN' "$d/runs/st/nan/stopped"
check "the stubborn job was told, then ended" grep -q "did not exit within 1s of the stop" \
	"$d/runs/st/stubborn/slurm/attempt1.out"
check "snan (with a later step) stopped early at epoch 2" \
	test "$(verdict snan 1)" = "stopped|stopped early at epoch 2 (the value is NaN)"
check "a stopped run's afterok step does not run" test ! -e "$d/runs/st/snan/eval-ran"
check "a sweep's task at chance stopped early at epoch 2 (its own verdict)" \
	test "$(verdict sw--MODE-chance 1)" = "stopped|stopped early at epoch 2 (the value is at chance)"
check "  its aftercorr step does not run" test ! -e "$d/runs/st/sw--MODE-chance/eval-ran"
check "the sweep's healthy task succeeded, its step ran" \
	test "$(verdict sw--MODE-healthy 1)|$(test -e "$d/runs/st/sw--MODE-healthy/eval-ran" && echo ran)" = \
	"success|COMPLETED 0:0, score 0.9|ran"
check "a run stopped in its second segment: the job's own epoch" \
	test "$(verdict segnan 1)" = "stopped|stopped early at epoch 2 (the value is NaN)"
check "its third segment never ran" eval '! grep -q "^3 start" "$d/runs/st/segnan/slurm/attempt1.seg"'
check "the baseline's watcher has the rule off" eval 'wrapper base 1 | grep -q "^xl_rule=off "'
check "a run's watcher has the rule on" eval 'wrapper nan 1 | grep -q "^xl_rule=on "'
check "git status shows no progress or stop file (init's .gitignore)" \
	eval '! as_user git -C "$d" status --porcelain --untracked-files=all | grep -E "/(progress|stopped|stop-request|stop-bar)$"'
u status --json >"$T_TMP/status.json"
validates "status --json validates with stopped verdicts" status "$T_TMP/status.json"
check "status shows the stop" eval 'u status nan | grep -q "stopped early at epoch 2 (the value is NaN)"'

expect_rc 65 "a stopped configuration is explored: plan add refuses it again" \
	u plan add MODE=nan --from base

# retry runs a stopped run to its end: its watcher's rule is off
step "retry nan" u retry nan --no-chain
check "the retry's watcher has the rule off" eval 'wrapper nan 2 | grep -q "^xl_rule=off "'
check "the retry reported its NaN epoch" wait_for 60 at_epoch nan 2
open_gate nan.2
check "the retry is judged" wait_for 90 judged nan 2
check "the retry ran to its end" test "$(verdict nan 2)" = "success|COMPLETED 0:0, score 0.5"

# a stopped job Slurm puts back in the queue (a node lost or a preemption
# after the stop record; here `scontrol requeuehold` once it ended, before
# a tick saw it end) is cancelled by the next tick, not left to start again
# only to end (a run chained behind it waited for that start); its verdict
# is the stop
step "new rq (MODE=user)" u new rq --from base --set MODE=user --force
step "submit rq" u submit rq --no-chain
check "rq reports epoch 1" wait_for 60 at_epoch rq 1
rqjob=$(db "SELECT t.job_id FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'rq'")
rq_state() { scontrol show job -o "$rqjob" | grep -o 'JobState=[A-Z]*'; }
check "a tick sees rq running" eval 'u tick >>"$T_TMP/ticks.txt" 2>&1; test "$(db "SELECT run_start > 0 FROM attempt WHERE job_id = ?" "$rqjob")" = 1'
step "xloop stop rq" u stop rq
check "rq's job ended on the stop" wait_for 60 eval 'test "$(rq_state)" = JobState=COMPLETED'
step "Slurm requeues it, held" scontrol requeuehold "$rqjob"
check "  pending again, held" wait_for 30 eval 'test "$(rq_state)" = JobState=PENDING'
check "the next tick cancels it and rq is judged: stopped" wait_for 60 judged rq 1
check "  its verdict is the stop" test "$(verdict rq 1)" = "stopped|stopped early at epoch 1 (you asked (xloop stop))"
check "  its job ended cancelled, never started again (one epoch 1 in its progress)" \
	test "$(rq_state)/$(grep -c '^epoch 1 ' "$d/runs/st/rq/progress")" = "JobState=CANCELLED/1"
check "  an event says why" test "$(db "SELECT count(*) FROM event WHERE detail LIKE ?" "%stopped early: cancelled%")" = 1

# issue 46: behind the best by more than the noise. A curve job (SEED,
# LEVEL, KIND): cbase and its replicate measure the noise at each epoch; a
# plainly worse run stops after the warm-up (stop.warmup 1, stop.behind
# 2) at epoch 3, where its job waits; one within noise runs to its end
# (its job waits at its last epoch until the worse one is judged)
cat >"$T_TMP/curve.sh" <<JOB
#!/bin/bash
set -u
SEED=1
LEVEL=80
KIND=a
G=$T_GATES
JOB
cat >>"$T_TMP/curve.sh" <<'JOB'
p="$XLOOP_RUN_DIR/progress" v=0
echo "epochs 6" >>"$p"
for e in 1 2 3 4 5 6; do
	v=0.$((LEVEL + e + SEED % 2))
	echo "epoch $e $v" >>"$p"
	if { [ "$LEVEL" -lt 50 ] && [ "$e" = 3 ]; } || { [ "$KIND" = b ] && [ "$e" = 6 ]; }; then
		while [ ! -e "$XLOOP_RUN_DIR/stopped" ] && [ ! -e "$G/$XLOOP_TAG.$XLOOP_ATTEMPT" ]; do
			sleep 0.2
		done
	fi
	[ -e "$XLOOP_RUN_DIR/stopped" ] && break
done
echo "{\"score\": $v}" >"$XLOOP_RUN_DIR/cv.json"
JOB
step "chmod 755 curve.sh" chmod 755 "$T_TMP/curve.sh"
step "stop.warmup 1" u config set stop.warmup 1
step "stop.behind 2" u config set stop.behind 2
step "adopt cbase" u adopt "$T_TMP/curve.sh" --tag cbase
step "new cbase-r2 (a replicate)" u new cbase-r2 --from cbase --set SEED=2 --force
for m in cbase cbase-r2; do
	step "submit $m" u submit "$m" --no-chain
	check "$m is judged" wait_for 90 judged "$m" 1
done
check "the replicate's watcher has the rule off" eval 'wrapper cbase-r2 1 | grep -q "^xl_rule=off "'
step "new worse" u new worse --from cbase --set LEVEL=30 --force
step "new within" u new within --from cbase --set KIND=b --force
for m in worse within; do
	step "submit $m" u submit "$m" --no-chain
done
check "worse's bar was written at submit, none in the warm-up" \
	eval 'grep -q "^bar 2 " "$d/runs/st/worse/stop-bar" && ! grep -q "^bar 1 " "$d/runs/st/worse/stop-bar"'
check "worse is judged" wait_for 90 judged worse 1
check "worse stopped early at epoch 3, behind the best by more than the noise" \
	test "$(verdict worse 1)" = "stopped|stopped early at epoch 3 (behind the best by more than the noise at 2 epochs running)"
open_gate within.1
check "within is judged" wait_for 90 judged within 1
check "within, inside the noise, ran to its end" test "$(verdict within 1)" = "success|COMPLETED 0:0, score 0.87"
# a sweep's task gets its bar at submit too
step "sweep sw2: LEVEL=32,33 from cbase" u sweep --set LEVEL=32,33 --from cbase --force --no-chain \
	--name sw2
t32=$(db "SELECT tag FROM run WHERE var = 'LEVEL' AND new_value = '32'")
check "the sweep's task has its bar" grep -q "^bar 2 " "$d/runs/st/$t32/stop-bar"
check "$t32 is judged" wait_for 90 judged "$t32" 1
check "the sweep's task stopped early at epoch 3, behind the best" \
	test "$(verdict "$t32" 1)" = "stopped|stopped early at epoch 3 (behind the best by more than the noise at 2 epochs running)"
finish
