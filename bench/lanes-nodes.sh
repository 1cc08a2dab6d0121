#!/usr/bin/env bash
# lanes-nodes.sh: lanes on nodes of 1 and 2 GPUs (issue 34 item 2). On the
# multi-node test cluster with node1 of 1 GPU and node2, node3 of 2
# (`testcluster.sh up --nodes 3 --gpus 1,2,2`, brought up here), a study
# whose runs ask --gres=gpu:2 plans BENCH_LANES_RUNS runs (default 8) of
# BENCH_RUN_SECS (default 10) with queue.lanes 1, then 2, then "auto", one
# after another, each driven by `xloop tick` once a second (bench/lanes.sh);
# prints each one's wall time (first tick to the last run's end), its runs
# a minute against 1 lane, the lanes it used, the nodes its runs ran on
# and the report's GPU rows, then whether 2 lanes reach 1.8 x one lane's
# throughput (0.9 a lane, as issue 34 asks of 4 lanes on 4 nodes).
# BENCH_LANES_COUNTS="auto" (say) runs only those lane counts.
#
#   sudo bench/lanes-nodes.sh          (root: it starts the test cluster)
#
# The cluster is the one of XLOOP_TESTCLUSTER_DIR and
# XLOOP_TESTCLUSTER_PORT_OFFSET (a slot of tests/one.sh: /tmp/xloop-testcluster-N
# and N00), restarted in this profile if it runs another; it is left up.
# Build ./xloop first (./build.sh), or set XLOOP_BIN. BENCH_KEEP=1 keeps the
# scratch directory (its results/lanes-nodes.json).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export BENCH_ROOT=$ROOT
BU=${XLOOP_BENCH_USER:-xloopt}
TC=$ROOT/ops/slurm/testcluster.sh
[ "$(id -u)" -eq 0 ] || { echo "bench/lanes-nodes.sh: run as root (it starts the test cluster)" >&2; exit 77; }
XBIN=${XLOOP_BIN:-$ROOT/xloop}
[ -x "$XBIN" ] || { echo "bench/lanes-nodes.sh: build ./xloop first (./build.sh), or set XLOOP_BIN" >&2; exit 1; }
id "$BU" >/dev/null 2>&1 || useradd -m "$BU"

"$TC" up --nodes 3 --gpus 1,2,2 >&2
"$TC" adduser "$BU" >/dev/null
eval "$("$TC" env)"
export SLURM_CONF
if [ -n "$(squeue -h -o %i)" ]; then
	echo "bench/lanes-nodes.sh: the cluster runs jobs already: $(squeue -h -o '%i %u %j %T' | head -n 5)" >&2
	exit 1
fi

BENCH_OUT=$(mktemp -d /tmp/xloop-bench-nodes-XXXXXX)
export BENCH_OUT
chmod 755 "$BENCH_OUT"
chown "$BU" "$BENCH_OUT"
mkdir -p "$BENCH_OUT/results"
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$BENCH_OUT"' EXIT
# what the user runs, where it can reach it (ops/lib/for-user.sh)
. "$ROOT/ops/lib/for-user.sh"
export BENCH_USER_ROOT=$BENCH_OUT/app
copy_for_user "$BENCH_USER_ROOT" "$XBIN"
export XLOOP_BIN=$BENCH_USER_ROOT/${XBIN##*/}
check_user_runs "$BU" "$XLOOP_BIN" >/dev/null

BENCH_LANES_COUNTS=${BENCH_LANES_COUNTS:-1 2 auto} BENCH_LANES_GRES=gpu:2 BENCH_LANES_NAME=lanes-nodes \
	bash "$ROOT/bench/lanes.sh"

/usr/bin/python3 - "$BENCH_OUT/results/lanes-nodes.json" "$(sinfo -V)" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))
base = runs[0]["runs_per_min"] or 1
print("%s, nodes %s; %d runs of %d s a study, --gres=gpu:2" % (
    sys.argv[2], "node1 (1 GPU), node2 and node3 (2 GPUs)", runs[0]["runs"], runs[0]["run_s"]))
print("| lanes | lanes used | wall | runs/min | vs 1 lane | most running | nodes | GPU rows (idle) |")
print("|---|---|---|---|---|---|---|---|")
for r in runs:
    print("| %s | %d | %.1f s | %.2f | %.2f× | %d | %s | %s |" % (
        r["lanes"], r["lanes_used"], r["wall_s"], r["runs_per_min"], r["runs_per_min"] / base,
        r["max_running"], ", ".join(r["nodes"]),
        ", ".join("%s GPU %d (%d s)" % (g.get("node") or "?", g["gpu"], g["idle_s"])
                  for g in r["gpus"]) or "-"))
two = next((r for r in runs if r["lanes"] == 2), None)
if two:
    k = two["runs_per_min"] / base
    print("2 lanes: %.2f x one lane's throughput (goal 1.8 x): %s" % (k, "met" if k >= 1.8 else "NOT met"))
PY
