#!/usr/bin/env bash
# Part 3: scale and start-up.
#   scale.sh make     the synthetic study (10,000 runs, 50,000 finished
#                     attempts: bench/synth.py into a DB made by `xloop init`);
#                     no Slurm needed
#   scale.sh measure  wall time and peak RSS of `xloop status --json`,
#                     `xloop next`, `xloop report` on it (status asks squeue
#                     once: cluster up, lock held)
#   scale.sh startup  binary size (as built and stripped), `xloop --version`
#                     vs `git --version` start-up; no Slurm needed
# Results in $BENCH_OUT/results/{synth,scale,startup}.json.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
R=$BENCH_OUT/results
RUNS=${BENCH_SCALE_RUNS:-5}
mkdir -p "$R"

case "$1" in
make)
	say "3b: a synthetic study of ${BENCH_SYNTH_RUNS:-10000} runs, ${BENCH_SYNTH_ATTEMPTS:-50000} attempts"
	d=$(user_dir scale)
	echo "$d" >"$BENCH_OUT/scale.dir"
	u git -C "$d" init -q -b main
	u "$X" -C "$d" init --study big >/dev/null
	t0=$EPOCHREALTIME
	u "$PY" "$BENCH_ROOT/bench/synth.py" "$d" "${BENCH_SYNTH_RUNS:-10000}" \
		"${BENCH_SYNTH_ATTEMPTS:-50000}" >"$R/synth.json"
	note "generated in $(since "$t0") s: $(cat "$R/synth.json")"
	;;
measure)
	d=$(cat "$BENCH_OUT/scale.dir")
	say "3b: status --json, next, report on it ($RUNS runs each after one warm-up, interleaved)"
	cat >"$d/spec.json" <<EOF
{"status --json": ["$X", "-C", "$d", "status", "--json"],
 "next": ["$X", "-C", "$d", "next"],
 "report": ["$X", "-C", "$d", "report", "--out", "$d/report.html"]}
EOF
	chmod 644 "$d/spec.json"
	u "$PY" "$BENCH_ROOT/bench/timeit.py" "$d/scale.json" "$RUNS" "$d/spec.json" --rss --warmup 1
	cp "$d/scale.json" "$R/scale.json"
	u "$X" -C "$d" status --json | "$PY" -c 'import json, sys
d = json.load(sys.stdin)
print(json.dumps({"status_runs": len(d.get("runs", [])), "slurm_reachable": d.get("slurm_reachable")}))' \
		>"$R/scale-check.json" || true
	stat -c '{"report_bytes": %s}' "$d/report.html" >"$R/scale-report.json" || true
	;;
startup)
	say "3c: binary size; xloop --version vs git --version (20 each, interleaved)"
	s=$BENCH_OUT/xloop.stripped
	strip -o "$s" "$X"
	chmod 755 "$s"
	printf '{"bytes": %s, "stripped_bytes": %s, "file": "%s"}\n' "$(stat -c %s "$X")" \
		"$(stat -c %s "$s")" "$(file -b "$X" | sed 's/"//g; s/BuildID\[sha1\]=[0-9a-f]*, //')" \
		>"$R/size.json"
	cat >"$BENCH_OUT/startup-spec.json" <<EOF
{"xloop --version": ["$X", "--version"], "git --version": ["git", "--version"]}
EOF
	chmod 644 "$BENCH_OUT/startup-spec.json"
	u "$PY" "$BENCH_ROOT/bench/timeit.py" "$BENCH_OUT/startup.json" 20 \
		"$BENCH_OUT/startup-spec.json" --rss --warmup 2
	cp "$BENCH_OUT/startup.json" "$R/startup.json"
	;;
*)
	echo "usage: scale.sh make|measure|startup" >&2
	exit 2
	;;
esac
