#!/usr/bin/env bash
# cluster.sh STEP: one step of the benchmark's cluster phase, run by
# bench/run.sh under `flock -o /tmp/xloop-cluster.lock`. The cluster is
# shared, so every Slurm-facing step runs here, each under its own short
# hold of the lock (2 minutes or so), never all at once. Steps: gap-a,
# gap-dies, gap-dslurm, gap-dnone, gap-b, gap-c (bench/gap.sh), calls
# (bench/calls.sh), scale (bench/scale.sh measure), lanes (bench/lanes.sh,
# on 4 fake GPUs), gap-steps, gap-stepsd2, gap-stepsfold, gap-stepsafter
# (bench/gap.sh's runs with steps, on 4 fake GPUs). Exits 99 at once when a
# test suite is running (the caller waits and tries again). Brings the test cluster up (plain
# profile) when it is down and leaves it up; cancels every job of the
# benchmark user before it returns.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
R=$BENCH_OUT/results
TC=$BENCH_ROOT/ops/slurm/testcluster.sh
step=$1
mkdir -p "$R"

if pgrep -f 'tests/run\.sh|build\.sh test' >/dev/null; then
	note "a test suite is running: the lock goes back"
	exit 99
fi
t_lock=$EPOCHREALTIME
echo "$t_lock" >"$R/lock-taken-$step"
# the machine's 1-minute load average as the step starts and ends (the 2
# cores are shared: other work runs beside the benchmark)
load0=$(cut -d' ' -f1 /proc/loadavg)
if ! "$TC" status >/dev/null 2>&1; then
	say "starting the test cluster (plain profile)"
	"$TC" up >&2
fi
"$TC" adduser "$BU" >/dev/null
eval "$("$TC" env)"
export SLURM_CONF
cleanup() {
	u scancel -u "$BU" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# the GPU must be free: nobody else's jobs may run during the measurements
for i in $(seq 1 30); do
	others=$(squeue -h -o '%i %u %j %T')
	[ -z "$others" ] && break
	[ "$i" -eq 1 ] && note "waiting (30 s at most) for jobs already in the queue: $others"
	sleep 1
done
if [ -n "$others" ]; then
	echo "bench: the cluster is busy with jobs that are not ours:" >&2
	echo "$others" >&2
	exit 1
fi

if [ ! -e "$R/cluster.json" ]; then
	profile=$("$TC" status 2>/dev/null | sed -n 's/^profile: *//p')
	$PY - "$R/cluster.json" "$(sinfo -V 2>&1)" "${profile:-?}" \
		"$(scontrol show config | sed -n 's/^MinJobAge *= *//p')" \
		"$(scontrol show config | sed -n 's/^SchedulerParameters *= *//p')" <<'PY'
import json, sys
json.dump({"sinfo_v": sys.argv[2], "profile": sys.argv[3], "min_job_age": sys.argv[4],
           "sched": sys.argv[5]}, open(sys.argv[1], "w"), indent=1)
PY
fi

case $step in
gap-steps*)
	# CPUs beside the GPU for the evaluations: the 4-GPU profile has 8
	"$TC" up --gpus 4 >&2
	"$TC" adduser "$BU" >/dev/null
	$PY - "$R/cluster-$step.json" "$("$TC" status 2>/dev/null | sed -n 's/^profile: *//p')" \
		"$(scontrol show node -o)" <<'PY'
import json, re, sys
node = sys.argv[3]
cpus = re.search(r"CPUTot=(\d+)", node)
gres = re.search(r"\bGres=(\S+)", node)
json.dump({"profile": sys.argv[2], "cpus": int(cpus.group(1)) if cpus else None,
           "gres": gres.group(1) if gres else None}, open(sys.argv[1], "w"), indent=1)
PY
	BENCH_GAP_MODES=${step#gap-} bash "$BENCH_ROOT/bench/gap.sh"
	;;
gap-*) BENCH_GAP_MODES=${step#gap-} bash "$BENCH_ROOT/bench/gap.sh" ;;
calls) bash "$BENCH_ROOT/bench/calls.sh" ;;
scale) bash "$BENCH_ROOT/bench/scale.sh" measure ;;
lanes)
	# 4 fake GPUs (restarts the cluster in that profile; the next user restarts it back)
	"$TC" up --gpus 4 >&2
	"$TC" adduser "$BU" >/dev/null
	bash "$BENCH_ROOT/bench/lanes.sh"
	;;
*)
	echo "cluster.sh: unknown step '$step'" >&2
	exit 2
	;;
esac

cleanup
for _ in $(seq 1 20); do
	[ -z "$(squeue -h -u "$BU" -o %i)" ] && break
	sleep 1
done
echo "{\"$step\": $(since "$t_lock"), \"load\": [$load0, $(cut -d' ' -f1 /proc/loadavg)]}" >"$R/took-$step.json"
