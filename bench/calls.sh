#!/usr/bin/env bash
# Part 2 (Slurm calls per poll) and part 3's tick-vs-squeue overhead, on
# one study. A long job holds the GPU and one run waits behind it (the
# usual depth-1 picture: 2 live jobs): `xloop tick` is timed against one
# bare `squeue`. Then sweeps (job arrays, chained afterany behind it) bring
# the live xloop jobs to 10, 100 and 300, and one tick at each size runs with
# a PATH shim that logs every Slurm command it starts. Nothing finishes
# meanwhile. Called by bench/cluster.sh (cluster up, lock held); writes
# $BENCH_OUT/results/calls.json and overhead-tick.json.
#   BENCH_CALLS_SIZES ("10 100 300"), BENCH_OVERHEAD_RUNS (15)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
R=$BENCH_OUT/results
SIZES=${BENCH_CALLS_SIZES:-10 100 300}
mkdir -p "$R"

# how many times one tick syncs to disk (fsync, fdatasync), or null without strace
tick_syncs() {
	command -v strace >/dev/null || { echo null; return; }
	runuser -u "$BU" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp \
		SLURM_CONF="$SLURM_CONF" strace -f -qq -c -e trace=fsync,fdatasync \
		-o "$1" "$X" -C "$d" tick >/dev/null 2>&1 || true
	awk '$NF == "fsync" || $NF == "fdatasync" { n += $4 } END { print n + 0 }' "$1"
}
user_jobs() { u squeue -h -r -u "$BU" -o %i | grep -c . || true; }
tick_line() { tail -n 1 "$d/.xloop/tick.log"; }

say "2: Slurm calls per tick with N live xloop jobs ($SIZES)"
d=$(user_dir calls)
study "$d" calls 0
u "$X" -C "$d" new hold --from base --set SLEEP=1200 >/dev/null
u "$X" -C "$d" submit hold --no-chain --time 00:30:00 >/dev/null
u "$X" -C "$d" new wait1 --from base --set X=1 >/dev/null
u "$X" -C "$d" submit wait1 >/dev/null
hold=$(dbq "$d" "SELECT job_id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'hold'")
for _ in $(seq 1 60); do
	[ "$(u squeue -h -j "$hold" -o %T)" = RUNNING ] && break
	sleep 1
done
note "job $hold holds the GPU: $(u squeue -h -j "$hold" -o %T)"
u "$X" -C "$d" tick >/dev/null 2>&1 || true

# 3a: a tick when nothing changed vs the one squeue it cannot avoid
say "3a: xloop tick (nothing changed, 2 live jobs) vs one bare squeue, interleaved"
cat >"$d/spec.json" <<EOF
{"xloop tick": ["$X", "-C", "$d", "tick"], "squeue": ["squeue", "-u", "$BU"]}
EOF
chmod 644 "$d/spec.json"
u "$PY" "$BENCH_USER_ROOT/bench/timeit.py" "$d/overhead.json" "${BENCH_OVERHEAD_RUNS:-15}" "$d/spec.json" --warmup 2
cp "$d/overhead.json" "$R/overhead-tick.json"
echo "{\"syncs\": $(tick_syncs "$d/strace-2.txt"), \"live\": $(user_jobs)}" >"$R/overhead-syncs.json"

shim=$d/shim
sh "$BENCH_ROOT/bench/shim.sh" "$shim" "$d/calls.log"
chown -R "$BU" "$shim" "$d/calls.log"
live=$(user_jobs)
next=2
rows=()
for n in $SIZES; do
	want=$((n - live))
	if [ "$want" -gt 0 ]; then
		vals=$(seq -s, "$next" $((next + want - 1)))
		next=$((next + want))
		t0=$EPOCHREALTIME
		u "$X" -C "$d" sweep --set "X=$vals" --from base --name "to$n" >/dev/null
		note "sweep of $want runs (one array) took $(since "$t0") s"
	fi
	for _ in $(seq 1 30); do
		[ "$(user_jobs)" -ge "$n" ] && break
		sleep 1
	done
	live=$(user_jobs)
	# one tick to take in the new jobs, then the measured one
	u "$X" -C "$d" tick >/dev/null 2>&1 || true
	first=$(tick_line)
	: >"$d/calls.log"
	runuser -u "$BU" -- env PATH="$shim:/usr/local/bin:/usr/bin:/bin" HOME=/tmp \
		SLURM_CONF="$SLURM_CONF" "$X" -C "$d" tick >"$d/tick-$n.out" 2>&1 || true
	calls=$(grep -c . "$d/calls.log" || true)
	measured=$(tick_line)
	cp "$d/calls.log" "$R/calls-$n.log"
	syncs=$(tick_syncs "$d/strace-$n.txt")
	# tick time at this size, interleaved with squeue
	u "$PY" "$BENCH_USER_ROOT/bench/timeit.py" "$d/t-$n.json" 5 "$d/spec.json" --warmup 0
	rows+=("$($PY - "$n" "$live" "$calls" "$d/calls.log" "$d/t-$n.json" "$first" "$measured" "$syncs" <<'PY'
import json, sys
n, live, calls, log, tj, first, measured, syncs = sys.argv[1:]
t = json.load(open(tj))
print(json.dumps({"n": int(n), "live": int(live), "calls": int(calls),
                  "commands": [l.split()[0] for l in open(log) if l.strip()],
                  "argv": [l.rstrip("\n") for l in open(log) if l.strip()],
                  "tick_log_first": first, "tick_log_measured": measured,
                  "syncs": json.loads(syncs),
                  "tick_median_ms": t["xloop tick"]["median_ms"],
                  "squeue_median_ms": t["squeue"]["median_ms"]}))
PY
)")
done
printf '%s\n' "${rows[@]}" | $PY -c 'import json, sys
json.dump([json.loads(l) for l in sys.stdin if l.strip()], open(sys.argv[1], "w"), indent=1)' "$R/calls.json"
u scancel -u "$BU" || true
