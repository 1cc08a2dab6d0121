#!/usr/bin/env bash
# gpus: 4
# Lanes (issue 18): on 4 GPUs with queue.lanes 4, 16 planned runs of 10 s
# driven by `tick` alone (a tick every second) keep every GPU busy: never
# more than 4 running, at least 3 x one lane's throughput (measured beside
# it; the benchmark's 3.6 x is printed), and every job that followed
# another on a GPU already queued in Slurm when that one ended (the GPU
# never waits for xloop; the gap left is Slurm's own start, its median
# printed and bounded loosely); the report's rows add up to what the jobs
# saw.
# Needs 4 GPUs: tests/one.sh --gpus 4 (one node) or --nodes 4 --gpus 1.
. "$(dirname "$0")/lib.sh"

if [ $(( ${XLOOP_GPUS:-1} * ${XLOOP_NODES:-1} )) -ne 4 ]; then
	skip "lanes on 4 GPUs" "needs 4 GPUs (tests/one.sh --gpus 4, or --nodes 4 --gpus 1)"
	finish
	exit
fi
X=$XLOOP_BIN
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=10
s=$(date +%s.%N)
echo "START x=$X device=gpu:${SLURM_JOB_GPUS:-none}"
sleep "$SLEEP"
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
printf '%s %s %s %s %s\n' "${SLURMD_NODENAME:-?}:${SLURM_JOB_GPUS:-none}" "$s" "$(date +%s.%N)" "$XLOOP_TAG" "$SLURM_JOB_ID" >>"$XLOOP_ROOT/times"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"

# study D with LANES lanes and N planned runs, ticked every second until
# every run is judged; prints "wall max_running" (wall from the first tick
# to the last run's end)
drive() {
	local d=$1 lanes=$2 n=$3 t0 i max=0 r judged
	new_study "$d" lanes "c['resources'].update(gres='gpu:1', cpus=1, mem='100M', time='00:10:00')
c['queue']['depth'] = 1
c['queue']['lanes'] = $lanes"
	step "the times file" as_user touch "$d/times"
	step "adopt base" as_user "$X" -C "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
	step "plan add n changes" as_user "$X" -C "$d" plan add $(seq -f 'X=%g' 1 "$n") --from base >/dev/null
	t0=$(date +%s.%N)
	for i in $(seq 1 $((n * 10 + 60))); do
		as_user "$X" -C "$d" tick >/dev/null 2>&1
		r=$(squeue -h -u "$XLOOP_TEST_USER" -t R -o %i | grep -c .)
		[ "$r" -gt "$max" ] && max=$r
		judged=$(as_user "$X" -C "$d" status --json | python3 -c 'import json, sys
print(sum(1 for r in json.load(sys.stdin)["runs"] if r["attempts"] and r["attempts"][-1]["verdict"]))')
		[ "$judged" -ge $((n + 1)) ] && break
		sleep 1
	done
	python3 -c 'import sys
t0 = float(sys.argv[1])
ends = [float(l.split()[2]) for l in open(sys.argv[2]) if l.strip()]
print("%.1f %s" % (max(ends) - t0 if ends else 1e9, sys.argv[3]))' "$t0" "$d/times" "$max"
}

d1=$(user_dir)
read -r wall1 max1 < <(drive "$d1" 1 4)
check "one lane: 4 runs end judged (wall ${wall1} s)" test "$(wc -l <"$d1/times")" -eq 4
check "one lane: one job at a time" test "$max1" -le 1

d4=$(user_dir)
# "auto": as many lanes as the partition's GPUs (sinfo) and the limits allow, 4 here
read -r wall4 max4 < <(drive "$d4" '"auto"' 16)
check "4 lanes: 16 runs end judged (wall ${wall4} s)" test "$(wc -l <"$d4/times")" -eq 16
check "4 lanes: never more than 4 running (saw $max4)" test "$max4" -le 4
out=$(as_user "$X" -C "$d4" status --json)
check "status shows each attempt's lane, all 4 used (lanes auto = 4 GPUs)" python3 -c 'import json, sys
d = json.loads(sys.argv[1])
lanes = {a["lane"] for r in d["runs"] if r["tag"] != "base" for a in r["attempts"]}
sys.exit(0 if lanes == {0, 1, 2, 3} else "lanes %s" % sorted(lanes))' "$out"
check "every run a success" python3 -c 'import json, sys
d = json.loads(sys.argv[1])
bad = [r["tag"] for r in d["runs"] if r["attempts"][-1]["verdict"] != "success"]
sys.exit("not a success: %s" % bad if bad else 0)' "$out"
# the throughput against one lane: the benchmark's goal is 3.6 x (README),
# 3.5 to 3.7 x here on an idle machine; at load 14 one GPU ran 5 runs and
# another 3 (a lane's run queued behind its own; Slurm's choice of GPU when
# two end together), 3.35 x. The suite's bound: at least 3 x (2 lanes
# working would give 2 x)
x4=$(python3 -c 'import sys; w4, w1 = float(sys.argv[1]), float(sys.argv[2]); print("%.2f" % ((16 / w4) / (4 / w1)))' "$wall4" "$wall1")
echo "# 4 lanes: $x4 x the per-run throughput of one (the benchmark's goal: 3.6 x)"
check "4 lanes: at least 3 x the per-run throughput of one ($x4 x: walls $wall4 s, $wall1 s)" \
	python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 3 else 1)' "$x4"
# each job's SubmitTime, asked once the runs are done (Slurm keeps an
# ended job for MinJobAge, 300 s here)
while read -r _ _ _ _ id; do
	printf '%s %s\n' "$id" "$(scontrol show job -o "$id" | sed -n 's/.* SubmitTime=\([^ ]*\).*/\1/p')"
done <"$d4/times" >"$d4/submitted"
# the times file grouped by GPU, each GPU's jobs in start order: the
# checks below read it so
BY_GPU='import sys
def by_gpu(path):
    by = {}
    for l in open(path):
        g, s, e, tag, i = l.split()
        by.setdefault(g, []).append((float(s), float(e), tag, i))
    for v in by.values():
        v.sort()
    return by
'
# chaining, told by Slurm's own SubmitTime (1 s resolution, rounded down):
# each job that followed another on a GPU was submitted before that one
# ended, so the GPU never waited for a tick. This holds on a loaded machine
# too: a tick comes every second or so, a run takes 10 s.
check "4 lanes: each GPU's next job was queued before the one before it ended" python3 -c "$BY_GPU"'import datetime
sub = {}
for l in open(sys.argv[2]):
    i, t = l.split()
    sub[i] = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S").timestamp()
by = by_gpu(sys.argv[1])
late = ["%s on %s submitted %.1f s after %s ended" % (b[2], g, sub[b[3]] - a[1], a[2])
        for g, v in by.items() for a, b in zip(v, v[1:]) if sub[b[3]] > a[1]]
print("\n".join(late))
sys.exit(1 if late or len(by) != 4 else 0)' "$d4/times" "$d4/submitted"
# the gap left is Slurm's start of a queued job (its scheduler runs at each
# job end): about a second idle, 2 s once under a loaded CI; bounded at 5 s
check "4 lanes: median idle gap per GPU at most 5 s (Slurm's start of a queued job)" python3 -c "$BY_GPU"'import statistics
by = by_gpu(sys.argv[1])
gaps = [b[0] - a[1] for v in by.values() for a, b in zip(v, v[1:])]
m = statistics.median(gaps) if gaps else 1e9
print("median gap %.2f s, max %.2f s over %d GPUs" % (m, max(gaps or [0]), len(by)))
sys.exit(0 if m <= 5 else 1)' "$d4/times"
# the report: one timeline row per (node, GPU), from what each job saw
# (4 GPUs of one node, or one GPU of each of 4 nodes: --nodes 4)
rep=$(as_user "$X" -C "$d4" report --out "$d4/report.html" --json)
# its busy time per GPU is what the jobs saw (Slurm's whole seconds and the
# job's own start: 3 s a job), its idle time the rest of the span; how the
# runs spread over the GPUs is the scheduler's (above)
check "report: one row per GPU, the 4 the jobs saw, busy and idle summed per GPU" python3 -c "$BY_GPU"'import json
r = json.loads(sys.argv[1])
g = r["gpus"]
print(g, "span", r["span_s"])
busy = {tuple(n.split(":")): [e - s for s, e, _, _ in v] for n, v in by_gpu(sys.argv[2]).items()}
rows = sorted((x["node"], str(x["gpu"])) for x in g)
if len(rows) != 4 or rows != sorted(busy):
    sys.exit("rows %s, the jobs saw %s" % (rows, sorted(busy)))
for x in g:
    saw = busy[(x["node"], str(x["gpu"]))]
    if abs(x["busy_s"] - sum(saw)) > 3 * len(saw) + 1 or abs(x["busy_s"] + x["idle_s"] - r["span_s"]) > 1:
        sys.exit("GPU %s: busy %s idle %s of span %s, the jobs saw %.1f s" % (x["gpu"], x["busy_s"], x["idle_s"], r["span_s"], sum(saw)))' "$rep" "$d4/times"
check "report: the page labels the GPU rows" grep -Eq '>([a-z0-9]+ )?GPU [0-3]</text>' "$d4/report.html"
finish
