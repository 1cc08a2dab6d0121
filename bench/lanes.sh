#!/usr/bin/env bash
# lanes.sh: throughput and per-GPU idle with queue.lanes 1, 2 and 4 on the
# test cluster's 4-GPU profile (issue 18). Run by bench/cluster.sh (step
# "lanes") under the cluster lock, after `testcluster.sh up --gpus 4`. For
# each lane count, a study plans BENCH_LANES_RUNS runs of RUN_SECS and is
# driven by `xloop tick` alone, once a second, until every run is judged;
# the wall time runs from the first tick to the last run's end (Slurm's
# EndTime), the per-GPU idle comes from `xloop report --json`. Writes
# results/lanes.json. bench/lanes-nodes.sh runs it on nodes of 1 and 2 GPUs
# with BENCH_LANES_COUNTS (the lane counts, "auto" too; default "1 2 4"),
# BENCH_LANES_GRES (each run's --gres, default gpu:1) and BENCH_LANES_NAME
# (the results file's name, default lanes).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
R=$BENCH_OUT/results
N=${BENCH_LANES_RUNS:-8}
out="["
for lanes in ${BENCH_LANES_COUNTS:-1 2 4}; do
	d=$(user_dir "lanes$lanes")
	study "$d" "lanes$lanes" 1
	u "$PY" - "$d/xloop.json" "$lanes" "${BENCH_LANES_GRES:-gpu:1}" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["queue"]["lanes"] = sys.argv[2] if sys.argv[2] == "auto" else int(sys.argv[2])
c["resources"]["gres"] = sys.argv[3]
json.dump(c, open(sys.argv[1], "w"), indent=2)
PY
	u "$X" -C "$d" plan add $(seq -f 'X=%g' 1 "$N") --from base >/dev/null
	say "lanes $lanes: $N runs of $RUN_SECS s, a tick a second"
	t0=$(date +%s.%N)
	maxrun=0
	for _ in $(seq 1 $((N * RUN_SECS + 120))); do
		u "$X" -C "$d" tick >/dev/null 2>&1 || true
		r=$(u squeue -h -u "$BU" -t R -o %i | grep -c . || true)
		[ "$r" -gt "$maxrun" ] && maxrun=$r
		left=$(dbq "$d" "SELECT count(*) FROM run r WHERE r.tag != 'base' AND NOT EXISTS
			(SELECT 1 FROM attempt a WHERE a.run_id = r.id AND a.verdict IS NOT NULL)")
		[ "$left" -eq 0 ] && [ "$(dbq "$d" "SELECT count(*) FROM run")" -gt "$N" ] && break
		sleep 1
	done
	rep=$(u "$X" -C "$d" report --out "$d/report.html" --json)
	ends=$(dbq "$d" "SELECT max(ended_at), min(started_at), count(*), max(lane) + 1,
		group_concat(DISTINCT node) FROM attempt WHERE n > 0 AND job_id IS NOT NULL")
	doc=$("$PY" - "$t0" "$ends" "$rep" "$lanes" "$N" "$RUN_SECS" "$maxrun" <<'PY'
import json, sys
t0 = float(sys.argv[1])
end, first, n, used, nodes = sys.argv[2].split("|")
end, first, n, used = int(end), int(first), int(n), int(used)
rep = json.loads(sys.argv[3])
lanes = sys.argv[4] if sys.argv[4] == "auto" else int(sys.argv[4])
runs, secs, maxrun = (int(x) for x in sys.argv[5:8])
wall = end - t0
print(json.dumps({"lanes": lanes, "lanes_used": used, "runs": runs, "run_s": secs,
                  "attempts": n, "nodes": sorted(set(nodes.split(","))) if nodes else [],
                  "wall_s": round(wall, 1), "runs_per_min": round(60 * runs / wall, 2),
                  "max_running": maxrun, "span_s": rep["span_s"], "idle_s": rep["idle_s"],
                  "gpus": rep["gpus"]}))
PY
)
	note "$doc"
	if [ "$out" = "[" ]; then out="[$doc"; else out="$out, $doc"; fi
	u scancel -u "$BU" >/dev/null 2>&1 || true
done
echo "$out]" >"$R/${BENCH_LANES_NAME:-lanes}.json"
