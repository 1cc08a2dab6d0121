#!/usr/bin/env bash
# The benchmarks of issue 11 (./build.sh bench builds ./xloop and runs this):
#   1. the GPU's idle gap between consecutive experiments, three ways
#      (bench/gap.sh), and when the driver dies
#   2. Slurm commands per `xloop tick` with 10, 100, 300 live jobs (bench/calls.sh)
#   3. tick vs one squeue; status/next/report on 10,000 runs and 50,000
#      attempts; binary size and start-up (bench/scale.sh)
#   4. throughput and per-GPU idle with queue.lanes 1, 2, 4 on 4 GPUs (bench/lanes.sh)
#   and 1e-g: the idle gap with a 30 s CPU evaluation per run, as xloop's steps,
#      folded into job.sh, chained by hand on the evaluation (bench/gap.sh, 4 GPUs)
# then rewrites BENCHMARKS.md (bench/report.py).
#   bench/run.sh steps (./build.sh bench steps): only 1e-g (about 10 min), and
#   only their part of BENCHMARKS.md is rewritten (report.py --steps).
# Runs as root: the test
# cluster is shared, so every Slurm-facing step runs in bench/cluster.sh,
# each step under its own `flock -o /tmp/xloop-cluster.lock` (a couple of
# minutes at most) and only while no test suite runs.
# The cluster is left up. BENCH_KEEP=1 keeps the scratch directory.
set -euo pipefail
part=${1:-all}
case $part in
all) steps="gap-a gap-dies gap-dslurm gap-dnone gap-b gap-c calls scale lanes gap-steps gap-stepsd2 gap-stepsfold gap-stepsafter" ;;
steps) steps="gap-steps gap-stepsd2 gap-stepsfold gap-stepsafter" ;;
*) echo "usage: bench/run.sh [steps]" >&2; exit 2 ;;
esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export BENCH_ROOT=$ROOT
LOCK=${BENCH_LOCK:-/tmp/xloop-cluster.lock}
BU=${XLOOP_BENCH_USER:-xloopt}
[ "$(id -u)" -eq 0 ] || { echo "bench/run.sh: run as root (it starts the test cluster)" >&2; exit 77; }
[ -x "$ROOT/xloop" ] || { echo "bench/run.sh: build ./xloop first (./build.sh)" >&2; exit 1; }
id "$BU" >/dev/null 2>&1 || useradd -m "$BU"

BENCH_OUT=$(mktemp -d /tmp/xloop-bench-XXXXXX)
export BENCH_OUT
chmod 755 "$BENCH_OUT"
chown "$BU" "$BENCH_OUT"
mkdir -p "$BENCH_OUT/results"
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$BENCH_OUT"' EXIT
# what the user runs (xloop, the scripts it runs), copied where it can
# reach them: the checkout may be in a 0700 directory (ops/lib/for-user.sh)
. "$ROOT/ops/lib/for-user.sh"
export BENCH_USER_ROOT=$BENCH_OUT/app
copy_for_user "$BENCH_USER_ROOT" "$ROOT/xloop"
copy_for_user "$BENCH_USER_ROOT/bench" "$ROOT"/bench/*.py "$ROOT"/bench/*.sh
export XLOOP_BIN=${XLOOP_BIN:-$BENCH_USER_ROOT/xloop}
check_user_runs "$BU" "$XLOOP_BIN" >/dev/null
. "$ROOT/bench/lib.sh"
t_start=$EPOCHREALTIME

/usr/bin/python3 - "$BENCH_OUT/results/machine.json" "$ROOT/xloop" <<'PY'
import json, os, platform, subprocess, sys, time
mem = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:"))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ver = subprocess.run([sys.argv[2], "--version"], capture_output=True, text=True).stdout.strip()
json.dump({"nproc": os.cpu_count(), "mem_kb": mem, "cpu": cpu, "kernel": platform.release(),
           "date": time.strftime("%Y-%m-%d %H:%M %Z"), "xloop": ver}, open(sys.argv[1], "w"), indent=1)
PY

if [ "$part" = all ]; then
	bash bench/scale.sh startup
	bash bench/scale.sh make
fi

# the cluster phase, step by step: for each, no test suite may be running,
# and the step holds the lock (a couple of minutes at most)
waited=0
for step in $steps; do
	while :; do
		t_wait=$EPOCHREALTIME
		if pgrep -f 'tests/run\.sh|build\.sh test' >/dev/null; then
			say "a test suite is running on the shared cluster: waiting for it to end"
			while pgrep -f 'tests/run\.sh|build\.sh test' >/dev/null; do sleep 10; done
		fi
		rc=0
		# -o: the lock's descriptor must not leak into the daemons that
		# `testcluster.sh up` may start, or they would hold it for ever
		flock -o "$LOCK" bash bench/cluster.sh "$step" || rc=$?
		taken=$(cat "$BENCH_OUT/results/lock-taken-$step" 2>/dev/null || echo "$EPOCHREALTIME")
		waited=$(awk -v a="$waited" -v b="$t_wait" -v c="$taken" 'BEGIN { printf "%.1f", a + c - b }')
		[ "$rc" -eq 99 ] && continue
		[ "$rc" -eq 0 ] || { echo "bench: step $step failed (exit $rc)" >&2; exit "$rc"; }
		break
	done
done

total=$(since "$t_start")
echo "{\"total\": $total, \"waited\": $waited}" >"$BENCH_OUT/results/took-total.json"
/usr/bin/python3 bench/report.py "$BENCH_OUT/results" $([ "$part" = steps ] && echo --steps) \
	>BENCHMARKS.md.tmp
mv BENCHMARKS.md.tmp BENCHMARKS.md
say "wrote BENCHMARKS.md ($total s, of which $waited s waiting for the cluster)"
/usr/bin/python3 bench/report.py "$BENCH_OUT/results" $([ "$part" = steps ] && echo --steps) --summary
