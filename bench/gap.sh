#!/usr/bin/env bash
# Part 1: the GPU's idle gap between consecutive experiments, driven three
# ways on the one-GPU test cluster, plus the driver dying after run 2.
# Called by bench/cluster.sh with the cluster up and the lock held; writes
# $BENCH_OUT/results/gap-{a,b,c,dies}.json (bench/slurmjobs.py: times from
# `scontrol show job`, not from our clock).
#   BENCH_RUNS_A (6)  runs driven by `xloop next` every 3 s, queue.depth 1
#   BENCH_RUNS_B (4)  runs of the naive poller (sbatch, squeue every 30 s)
#   BENCH_RUNS_C (3)  runs driven by `xloop tick` every 60 s, queue.depth 0
#   BENCH_RUNS_D (6)  runs of the driver-dies cases (depth 1; cron ticks every 60 s,
#                     or the Slurm driver's feeder alone, or nothing)
#   BENCH_POLL_B (30), BENCH_TICK_C (60): the intervals
#   modes steps, stepsd2, stepsfold, stepsafter (cluster steps gap-steps*, on
#                     4 GPUs): BENCH_RUNS_A runs with a BENCH_EVAL_SECS (30)
#                     CPU evaluation each, as xloop's steps (queue.depth 1,
#                     2), folded into job.sh, and chained by hand on the
#                     evaluation
set -euo pipefail
. "$(dirname "$0")/lib.sh"
R=$BENCH_OUT/results
NA=${BENCH_RUNS_A:-6} NB=${BENCH_RUNS_B:-4} NC=${BENCH_RUNS_C:-3} ND=${BENCH_RUNS_D:-6}
EV=${BENCH_EVAL_SECS:-30}
POLL_B=${BENCH_POLL_B:-30} TICK=${BENCH_TICK_C:-60}

judged() { dbq "$1" "SELECT count(*) FROM attempt WHERE n > 0 AND verdict IS NOT NULL"; }
submitted() { dbq "$1" "SELECT count(*) FROM attempt WHERE n > 0 AND job_id IS NOT NULL"; }
job_ids() { dbq "$1" "SELECT job_id FROM attempt WHERE n > 0 AND job_id IS NOT NULL ORDER BY id"; }
plan() {
	local d=$1 n=$2 i vals=()
	for i in $(seq 1 "$n"); do vals+=("X=$i"); done
	u "$X" -C "$d" plan add "${vals[@]}" >/dev/null
}
# wait until Slurm runs none of the bench user's jobs, or SECONDS reaches $1
wait_idle() {
	while [ "$(live_jobs)" -gt 0 ] && [ "$SECONDS" -lt "$1" ]; do sleep 1; done
}
# wait until the study has submitted n jobs and Slurm runs none (at most $3 s)
wait_drained() {
	local d=$1 n=$2 end=$((SECONDS + $3))
	while [ "$SECONDS" -lt "$end" ]; do
		[ "$(submitted "$d")" -ge "$n" ] && [ "$(live_jobs)" -eq 0 ] && return 0
		sleep 1
	done
	note "gave up waiting for $d to drain"
	return 1
}

# (a) the agent calls `xloop next` every 3 s; depth 1 keeps the next run queued afterany
mode_a() {
	local d t0 end
	say "1a: xloop next every 3 s, queue.depth 1, $NA runs of ${RUN_SECS} s"
	d=$(user_dir gap-a)
	study "$d" gapa 1
	plan "$d" "$NA"
	t0=$SECONDS end=$((SECONDS + 120 + NA * (RUN_SECS + 10)))
	while [ "$SECONDS" -lt "$end" ]; do
		u "$X" -C "$d" next >>"$d/driver.txt" 2>&1 || true
		[ "$(judged "$d")" -ge "$NA" ] && break
		sleep 3
	done
	note "took $((SECONDS - t0)) s"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" a "$R/gap-a.json" $(job_ids "$d")
}

# (b) the naive poller: sbatch, then squeue every 30 s until the queue is empty
mode_b() {
	local d t0 pid
	say "1b: naive poller (sbatch; squeue every ${POLL_B} s until empty), $NB runs"
	d=$(user_dir gap-b)
	write_job "$d/job.sh"
	t0=$SECONDS
	u bash "$BENCH_USER_ROOT/bench/naive-poller.sh" "$d" "$NB" "$POLL_B" >"$d/poller.txt" 2>&1 &
	pid=$!
	wait "$pid" || note "the poller failed: $(tail -n 3 "$d/poller.txt")"
	wait_idle $((SECONDS + RUN_SECS + 120))
	note "took $((SECONDS - t0)) s"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" b "$R/gap-b.json" $(cat "$d/ids")
}

# (c) cron: `xloop tick` every 60 s, queue.depth 0 (nothing pre-queued)
mode_c() {
	local d t0 k=0 done_=0
	say "1c: xloop tick every ${TICK} s, queue.depth 0, $NC runs"
	d=$(user_dir gap-c)
	study "$d" gapc 0
	plan "$d" "$NC"
	t0=$SECONDS
	while [ "$done_" -eq 0 ] && [ "$k" -lt $((NC + 3)) ]; do
		u "$X" -C "$d" tick >>"$d/ticks.txt" 2>&1 || true
		k=$((k + 1))
		while [ "$SECONDS" -lt $((t0 + TICK * k)) ]; do
			if [ "$(submitted "$d")" -ge "$NC" ] && [ "$(live_jobs)" -eq 0 ]; then
				done_=1
				break
			fi
			sleep 1
		done
	done
	note "took $((SECONDS - t0)) s, $k ticks"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" c "$R/gap-c.json" $(job_ids "$d")
}

# (a) when the driver dies: the agent's `next` loop is killed right after the
# call that judged run 2; what is left: cron ticks every 60 s (dies), Slurm's
# feeder job alone (dslurm: driver.mode slurm, no cron), or nothing (dnone:
# driver.mode none, no cron: it waits BENCH_DIES_CAP s, 2 runs by default)
mode_dies() { dies_case dies none 1; }
mode_dslurm() { dies_case dslurm slurm 0; }
mode_dnone() { dies_case dnone none 0; }

# dies_case NAME DRIVER CRON: the study of ND runs, its agent killed after run 2
dies_case() {
	local name=$1 driver=$2 with_cron=$3 d t0 drv cron="" killed_at="" end queued="" cap
	say "1d ($name): depth 1, driver.mode $driver, the agent's next loop dies after run 2;" \
		"$([ "$with_cron" = 1 ] && echo "cron ticks every ${TICK} s" || echo "no cron"); $ND runs"
	d=$(user_dir "gap-$name")
	study "$d" "gap$name" 1 "$driver"
	plan "$d" "$ND"
	t0=$SECONDS
	(while :; do
		u "$X" -C "$d" next >>"$d/driver.txt" 2>&1 || true
		sleep 3
	done) &
	drv=$!
	sleep 1
	if [ "$with_cron" = 1 ]; then
		(c0=$(date +%s) k=0
		while :; do
			u "$X" -C "$d" tick >>"$d/ticks.txt" 2>&1 || true
			k=$((k + 1))
			while [ "$(date +%s)" -lt $((c0 + TICK * k)) ]; do sleep 1; done
		done) &
		cron=$!
	fi
	end=$((SECONDS + 90 + ND * (RUN_SECS + 10) + 2 * TICK))
	cap=${BENCH_DIES_CAP:-$((2 * RUN_SECS + 30))}
	while [ "$SECONDS" -lt "$end" ]; do
		if [ -z "$killed_at" ] && [ "$(judged "$d")" -ge 2 ]; then
			kill "$drv" 2>/dev/null || true
			killed_at=$(date +%s)
			# the `next` that judged run 2 finishes what it started (it
			# feeds the queue after judging); the loop around it is gone
			for _ in $(seq 1 60); do
				pgrep -f -- "-C $d next" >/dev/null || break
				sleep 0.5
			done
			queued=$(u squeue -h -u "$BU" -o '%j:%T' | tr '\n' ' ')
			note "driver killed after run 2 was judged; in Slurm: ${queued:-nothing}"
			[ "$driver" = none ] && [ "$with_cron" = 0 ] && end=$((SECONDS + cap))
		fi
		if [ -n "$killed_at" ] && [ "$(submitted "$d")" -ge "$ND" ] &&
			[ "$(judged "$d")" -ge "$ND" ] && [ "$(live_jobs)" -eq 0 ]; then
			break
		fi
		sleep 0.5
	done
	local stop_at
	stop_at=$(date +%s)
	kill "$drv" $cron 2>/dev/null || true
	wait "$drv" $cron 2>/dev/null || true
	u scancel -u "$BU" 2>/dev/null || true
	note "took $((SECONDS - t0)) s"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" "$name" "$R/gap-$name.json" $(job_ids "$d")
	$PY - "$R/gap-$name.json" "${killed_at:-0}" "$queued" "$(judged "$d")" "$ND" "$driver" \
		"$with_cron" "$stop_at" <<'PY'
import json, sys
p, killed, queued, judged, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
doc = json.load(open(p))
doc.update(killed_at=killed, queued_at_kill=queued.split(), runs_wanted=want, judged=judged,
           driver=sys.argv[6], cron=sys.argv[7] == "1")
ran = sorted((j for j in doc["jobs"] if j["start"] and j["end"]), key=lambda j: j["start"])
doc["completed"] = len(ran) >= want and judged >= want
idle = sum(max(0, b["start"] - max(a["end"], killed)) for a, b in zip(ran, ran[1:]) if b["start"] > killed)
if not doc["completed"] and ran:
    # never completes: idle from the last job's end until the benchmark gave up
    idle += max(0, int(sys.argv[8]) - max(ran[-1]["end"], killed))
doc["idle_after_kill_s"] = idle
json.dump(doc, open(p, "w"), indent=1)
PY
}

# Runs with steps (issue 28), the same study three ways on the 4-GPU profile
# (8 CPUs: evaluations run beside the trainings; cluster steps gap-steps,
# gap-stepsfold, gap-stepsafter): each run a RUN_SECS training on the GPU and
# an EV s evaluation that needs no GPU.
# steps_scripts DIR: DIR/train.sh, DIR/eval.sh, the two folded into DIR/fold.sh,
# and the baseline's DIR/cv0.json, owned by the user
steps_scripts() {
	local d=$1
	write_job "$d/train.sh"
	printf '#!/bin/bash\necho "START eval"\nsleep %s\nprintf '"'"'{"score": 1}\\n'"'"' >"$XLOOP_RUN_DIR/cv.json"\n' \
		"$EV" >"$d/eval.sh"
	{ cat "$d/train.sh"; tail -n +2 "$d/eval.sh"; } >"$d/fold.sh"
	printf '{"score": 0}\n' >"$d/cv0.json"
	chmod 644 "$d/eval.sh" "$d/fold.sh"
	chown "$BU" "$d/train.sh" "$d/eval.sh" "$d/fold.sh" "$d/cv0.json"
}

# steps_drive DIR N: the agent's `next` every 3 s until N runs are judged
steps_drive() {
	local d=$1 n=$2 t0=$SECONDS end=$((SECONDS + 120 + $2 * (RUN_SECS + EV + 10)))
	while [ "$SECONDS" -lt "$end" ]; do
		u "$X" -C "$d" next >>"$d/driver.txt" 2>&1 || true
		[ "$(judged "$d")" -ge "$n" ] && break
		sleep 3
	done
	note "took $((SECONDS - t0)) s, $(judged "$d") of $n runs judged"
}

# (e) xloop's steps: the evaluation its own CPU job `afterok` on its
# training; the next run's training chains on the training before
mode_steps() { steps_xloop steps 1; }
# (e2) the same with queue.depth 2 (a run in its evaluation counts as live)
mode_stepsd2() { steps_xloop stepsd2 2; }

# steps_xloop NAME DEPTH: the study of runs with steps, queue.depth DEPTH
steps_xloop() {
	local name=$1 depth=$2 d
	say "1e ($name): runs with steps, ${RUN_SECS} s training + ${EV} s CPU evaluation, next every 3 s, depth $depth, $NA runs"
	d=$(user_dir "gap-$name")
	study "$d" "gap$name" "$depth"
	steps_scripts "$d"
	u "$X" -C "$d" adopt "$d/train.sh" --tag steps --step eval="$d/eval.sh" --cv "$d/cv0.json" >/dev/null
	u "$X" -C "$d" plan add $(seq -f 'X=%g' 1 "$NA") --from steps >/dev/null
	steps_drive "$d" "$NA"
	# gaps between the GPU steps (the attempts' own jobs); the evaluations
	# count for the span
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" "$name" "$R/gap-$name.json" $(job_ids "$d") -- \
		$(dbq "$d" "SELECT job_id FROM step_job WHERE job_id != '' ORDER BY id")
	# the `next` calls that fed nothing although no job waited in the queue
	$PY - "$R/gap-$name.json" "$d/driver.txt" <<'PY'
import json, sys
said = [ln.strip() for ln in open(sys.argv[2]) if ln.startswith("fed nothing: the queue is full")
        and " and 0 waiting" in ln]
doc = json.load(open(sys.argv[1]))
doc["full_none_waiting"] = {"count": len(said), "first": said[0] if said else None}
json.dump(doc, open(sys.argv[1], "w"), indent=1)
PY
}

# (f) the evaluation folded into job.sh: one GPU job per run, as without steps
mode_stepsfold() {
	local d
	say "1f: evaluation folded into job.sh (${RUN_SECS} s + ${EV} s on the GPU), next every 3 s, depth 1, $NA runs"
	d=$(user_dir gap-stepsfold)
	study "$d" gapfold 1
	steps_scripts "$d"
	u "$X" -C "$d" adopt "$d/fold.sh" --tag fold --cv "$d/cv0.json" >/dev/null
	u "$X" -C "$d" plan add $(seq -f 'X=%g' 1 "$NA") --from fold >/dev/null
	steps_drive "$d" "$NA"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" stepsfold "$R/gap-stepsfold.json" $(job_ids "$d")
}

# (g) the two jobs chained by hand, each training `afterany` on the evaluation
# before (bench/steps-chain.sh: all submitted at once, no driver)
mode_stepsafter() {
	local d t0 end
	say "1g: training afterany on the previous evaluation (sbatch by hand), $NA runs"
	d=$(user_dir gap-stepsafter)
	steps_scripts "$d"
	t0=$SECONDS end=$((SECONDS + 120 + NA * (RUN_SECS + EV + 10)))
	u bash "$BENCH_USER_ROOT/bench/steps-chain.sh" "$d" "$NA" >"$d/chain.txt" 2>&1 ||
		note "the chain failed: $(tail -n 3 "$d/chain.txt")"
	sleep 2
	wait_idle "$end"
	note "took $((SECONDS - t0)) s"
	# shellcheck disable=SC2046
	$PY "$BENCH_ROOT/bench/slurmjobs.py" stepsafter "$R/gap-stepsafter.json" $(cat "$d/ids") -- \
		$(cat "$d/eval-ids")
}

mkdir -p "$R"
printf '{"run_secs": %s, "runs": {"a": %s, "b": %s, "c": %s, "dies": %s, "dslurm": %s, "dnone": %s, "steps": %s, "stepsd2": %s, "stepsfold": %s, "stepsafter": %s}, "poll_b": %s, "tick": %s, "eval_secs": %s}\n' \
	"$RUN_SECS" "$NA" "$NB" "$NC" "$ND" "$ND" "$ND" "$NA" "$NA" "$NA" "$NA" "$POLL_B" "$TICK" "$EV" \
	>"$R/gap-config.json"
for m in ${BENCH_GAP_MODES:-a dies dslurm dnone b c}; do
	"mode_$m"
done
