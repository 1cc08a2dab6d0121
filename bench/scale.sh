#!/usr/bin/env bash
# Part 3: scale and start-up.
#   scale.sh make     the synthetic study (10,000 runs, 50,000 finished
#                     attempts: bench/synth.py into a DB made by `xloop init`);
#                     no Slurm needed
#   scale.sh measure  wall time and peak RSS of `xloop status --json`,
#                     `xloop next`, `xloop report` on it (status asks squeue
#                     once: cluster up, lock held)
#   scale.sh startup  binary size (as built and stripped), `xloop --version`
#                     vs `git --version` start-up, and `xloop tick` on a study
#                     with nothing in flight (no Slurm call); no Slurm needed
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
	u "$PY" "$BENCH_USER_ROOT/bench/synth.py" "$d" "${BENCH_SYNTH_RUNS:-10000}" \
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
	u "$PY" "$BENCH_USER_ROOT/bench/timeit.py" "$d/scale.json" "$RUNS" "$d/spec.json" --rss --warmup 1
	cp "$d/scale.json" "$R/scale.json"
	u "$X" -C "$d" status --json >"$BENCH_OUT/status.json" || true
	reads=null
	if command -v strace >/dev/null; then
		u strace -f -qq -c -e trace=pread64,read -o "$d/strace-next.txt" "$X" -C "$d" next \
			>/dev/null 2>&1 || true
		reads=$(awk '$NF == "pread64" { n += $4 } END { print n + 0 }' "$d/strace-next.txt")
	fi
	"$PY" - "$BENCH_OUT/status.json" "$reads" >"$R/scale-check.json" <<'PY' || true
import json, os, sys
d = json.load(open(sys.argv[1]))
print(json.dumps({"status_runs": len(d.get("runs", [])), "slurm_reachable": d.get("slurm_reachable"),
                  "status_bytes": os.path.getsize(sys.argv[1]),
                  "next_db_reads": json.loads(sys.argv[2])}))
PY
	stat -c '{"report_bytes": %s}' "$d/report.html" >"$R/scale-report.json" || true
	;;
startup)
	say "3c: binary size; xloop --version vs git --version, an idle tick (20 each, interleaved)"
	s=$BENCH_OUT/xloop.stripped
	strip -o "$s" "$X"
	chmod 755 "$s"
	printf '{"bytes": %s, "stripped_bytes": %s, "file": "%s"}\n' "$(stat -c %s "$X")" \
		"$(stat -c %s "$s")" "$(file -b "$X" | sed 's/"//g; s/BuildID\[sha1\]=[0-9a-f]*, //')" \
		>"$R/size.json"
	# and a tick's own cost: a study with nothing in flight asks Slurm nothing
	d=$(user_dir idle)
	study "$d" idle 1
	cat >"$BENCH_OUT/startup-spec.json" <<EOF
{"xloop --version": ["$X", "--version"], "git --version": ["git", "--version"],
 "xloop tick, nothing in flight": ["$X", "-C", "$d", "tick"]}
EOF
	chmod 644 "$BENCH_OUT/startup-spec.json"
	u "$PY" "$BENCH_USER_ROOT/bench/timeit.py" "$BENCH_OUT/startup.json" 20 \
		"$BENCH_OUT/startup-spec.json" --rss --warmup 2
	cp "$BENCH_OUT/startup.json" "$R/startup.json"
	;;
*)
	echo "usage: scale.sh make|measure|startup" >&2
	exit 2
	;;
esac
