#!/usr/bin/env bash
# Issue 46: a stopped run informs the choice of the best, never becomes it.
# xloop test-search --curves replays bench/curves/wine (real learning
# curves) through autopilot's proposer, the choice of the best and the stop
# rule. On stream 0, one lane, the rule stops the diverging learning rate
# (LR=3, 0.51 at the end) and two slow ones; the configurations left all
# score 0.96 to 1.00. The choice's model fits the stopped runs at their
# value at the stop (prop_run.partial, best.c): with that contrast it moves
# the best off the baseline at run 14; without it (--stopped proposer, xloop
# before) the best stays the baseline until run 54 (no rule: 18). Never a
# configuration without a run that finished. Same seeds, same runs until the
# first stop with and without the rule (the comparison is paired). Needs no Slurm.
. "$(dirname "$0")/lib.sh"

R=${XLOOP_ROOT_DIR:?}
zcat "$R/bench/curves/wine.json.gz" >"$T_TMP/wine.json"
replay() { "$XLOOP_BIN" --json test-search --curves "$T_TMP/wine.json" --stream 0 --lanes 1 \
	--hours 0.0017 "$@"; }
step "the replay with the rule" replay >"$T_TMP/stop.json"
step "the replay without it" replay --no-stop >"$T_TMP/nostop.json"
step "the replay with the choice blind to stopped runs" replay --stopped proposer >"$T_TMP/blind.json"

# the checks read the replays' documents (python3: the tests' JSON reader)
PY=/usr/bin/python3
check "the rule stops runs behind the best" $PY -c 'import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sys.exit(0 if sum(1 for r in t if (r["why"] or "").startswith("behind")) >= 2 else 1)' "$T_TMP/stop.json"
base='{"ALPHA": "0.0001", "BATCH": "128", "HIDDEN": "64", "LR": "0.01"}'
check "the best moves off the baseline within 20 runs when the choice's model sees the stopped runs" \
	$PY -c 'import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sys.exit(0 if t[:20][-1]["best"] != json.loads(sys.argv[2]) else 1)' "$T_TMP/stop.json" "$base"
check "blind to them, the best is the baseline for 40 runs" $PY -c 'import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sys.exit(0 if all(r["best"] == json.loads(sys.argv[2]) for r in t[:40]) else 1)' "$T_TMP/blind.json" "$base"
check "the best is always a configuration with a run that finished" $PY -c 'import json, sys
fin, bad = [], 0
for r in json.load(open(sys.argv[1]))["trace"]:
    if r["stopped"] is None and r["proven"]:
        fin.append(r["config"])
    bad += r["best"] not in fin
sys.exit(1 if bad else 0)' "$T_TMP/stop.json"
check "with and without the rule, the same runs until the first stop" $PY -c 'import json, sys
a, b = (json.load(open(p))["trace"] for p in sys.argv[1:3])
k = [r["stopped"] is not None for r in a].index(True)
sys.exit(0 if [(r["config"], r["seed"]) for r in a[:k + 1]] == [(r["config"], r["seed"]) for r in b[:k + 1]] else 1)' \
	"$T_TMP/stop.json" "$T_TMP/nostop.json"
check "without the rule, where it would have stopped each run" $PY -c 'import json, sys
t = json.load(open(sys.argv[1]))["trace"]
sys.exit(0 if sum(1 for r in t if r["would_stop"] is not None and r["would_secs"] < r["secs"]) >= 2 else 1)' \
	"$T_TMP/nostop.json"
finish
