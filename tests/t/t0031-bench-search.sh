#!/usr/bin/env bash
# The search benchmark's plumbing (bench/search.py, ./build.sh bench search),
# small: two streams of the synthetic objectives against xloop test-search
# and random search (and Optuna 3.1's TPE when the host has python3-optuna),
# a cache and a trace store of its own, BENCHMARKS.md untouched by a partial run; and the
# ask-and-tell protocol of bench/optuna_ask.py (one at a time, and on 3
# lanes with constant liar). test-search --lanes: 1 is the default's output,
# byte for byte; on 3 lanes no proposal repeats a run in flight, and
# --external asks 3 runs ahead once the baseline is scored. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

R=${XLOOP_ROOT_DIR:?}
PY=/usr/bin/python3
methods=xloop,random
if $PY -c 'import optuna' 2>/dev/null; then
	methods=$methods,tpe-3.1
	have_optuna=1
fi
sum=$(cksum <"$R/BENCHMARKS.md")
step "bench/search.py, peak and flat, 2 streams" env XLOOP_BENCH_CACHE="$T_TMP/cache.json" \
	XLOOP_BENCH_TRACES="$T_TMP/traces.json" \
	$PY "$R/bench/search.py" --xloop "$XLOOP_BIN" --only peak,flat --streams 2 \
	--flat-streams 3 --rival-flat-streams 1 --methods "$methods" --no-slurm >"$T_TMP/out"
out=$T_TMP/out
check "the peak table has xloop over 2 streams" \
	grep -qE '^\| xloop \| 2 \| 0\.[0-9]{4}, 0\.[0-9]{4} \| .* \| [0-9.]+; [0-9] of 2 \|' "$out"
check "random search ran the same 2 streams" grep -qE '^\| random \| 2 \|' "$out"
check "the flat table has xloop over 3 streams" grep -qE '^\| xloop \| 3 \| 0\.9000, 0\.9000' "$out"
check "the goal is stated per cell" grep -qE '^\| \(a\) peak \| 30 runs \| (met|not met) \| xloop 0' "$out"
check "the flat cells count xloop's streams that move their best, and that label it confirmed" \
	sh -c "grep -qE '^\| \(a\) flat \| 60 runs \| (met|not met) \| [0-3] of 3 xloop streams move their best' '$out' &&
	grep -qE '^\| \(a\) flat \| 60 runs \| (met|not met) \| [0-3] of 3 xloop streams label their best confirmed' '$out'"
check "xloop's lead over each rival per stream (mean, min, standard error)" \
	grep -qE '^\| random \| [-+][0-9.]+, [-+][0-9.]+, [0-9.]+ \|' "$out"
check "a partial run leaves BENCHMARKS.md alone" test "$(cksum <"$R/BENCHMARKS.md")" = "$sum"
check "each unit's trace is kept by objective and noise, lanes, method, stream, budget (xloop's by its binary)" \
	grep -qE '"peak@0.01\|1\|xloop\|2\|60\|[0-9a-f]{12}": \[\[0\.[0-9]+, [0-9]+, [0-9]+, (true|false)\]' "$T_TMP/traces.json"

if [ -n "${have_optuna:-}" ]; then
	printf '%s\n' '{"sampler": "tpe", "seed": 1, "trials": 2, "vars": [["A", "int", 0, 3], ["B", "cat", ["x", "y"]]], "enqueue": {"A": 2, "B": "y"}}' \
		'{"tell": 0.5}' '{"tell": 0.7}' >"$T_TMP/in"
	printf '%s\n' '{"sampler": "tpe-liar", "seed": 1, "trials": 4, "lanes": 3, "vars": [["A", "int", 0, 3]], "enqueue": {"A": 2}}' \
		'{"tell": 0.5}' '{"tell": 0.7}' '{"tell": 0.1}' '{"tell": 0.2}' >>"$T_TMP/in"
	step "optuna_ask.py, a study of 2 trials, then 4 on 3 lanes" sh -c "$PY -I '$R/bench/optuna_ask.py' <'$T_TMP/in'" >"$T_TMP/ask"
	check "it says its version, asks the enqueued baseline first, and ends the study; on 3 lanes 3 asks go out before the first tell" \
		$PY -c 'import json, sys
ln = [json.loads(x) for x in open(sys.argv[1])]
assert "optuna" in ln[0], ln
assert ln[1] == {"ask": {"A": 2, "B": "y"}}, ln
assert set(ln[2]["ask"]) == {"A", "B"} and ln[3] == {"done": True}, ln
assert ln[4] == {"ask": {"A": 2}} and all("ask" in x for x in ln[5:8]), ln
assert ln[8] == {"done": True} and len(ln) == 9, ln' "$T_TMP/ask"
else
	skip "optuna_ask.py's protocol" "no python3-optuna on the host"
fi

"$XLOOP_BIN" test-search --objective lead --vars 5 --budget 20 --stream 2 >"$T_TMP/l0.json"
"$XLOOP_BIN" test-search --objective lead --vars 5 --budget 20 --stream 2 --lanes 1 >"$T_TMP/l1.json"
check "test-search --lanes 1 prints the default's output, byte for byte" cmp "$T_TMP/l0.json" "$T_TMP/l1.json"
for s in 1 2 3; do
	"$XLOOP_BIN" test-search --objective peak --budget 30 --stream $s --lanes 3 >"$T_TMP/l3-$s.json"
done
check "--lanes 3: 30 runs, none proposed while the same run was in flight" $PY -c 'import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    assert d["lanes"] == 3 and d["runs"] == 30 and d["in_flight_repeats"] == 0, (p, d["runs"])
    assert [t["runs"] for t in d["trace"]] == list(range(1, 31)), p' "$T_TMP"/l3-*.json
seq 6 | sed 's/^/0.5/' | "$XLOOP_BIN" test-search --external --space X=1..9:int --space Y=a,b,c \
	--baseline "$(printf 'X=5\nY=a\nSEED=1\n')" --budget 6 --lanes 3 >"$T_TMP/ext3"
check "--external --lanes 3: the baseline alone, then 3 asks ahead of each score read" $PY -c 'import json, sys
k = ["ask" if "ask" in json.loads(x) else "best" for x in open(sys.argv[1])]
assert k == ["ask", "best", "ask", "ask", "ask", "best", "ask", "best", "ask", "best",
             "best", "best"], k' "$T_TMP/ext3"

finish
