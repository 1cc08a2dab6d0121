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

base='"ALPHA=0.0001,BATCH=128,HIDDEN=64,LR=0.01"'
k='def k: to_entries | map("\(.key)=\(.value)") | join(",");'
check "the rule stops runs behind the best" \
	jq -e '[.trace[] | select(.why // "" | startswith("behind"))] | length >= 2' "$T_TMP/stop.json"
check "the best moves off the baseline within 20 runs when the choice's model sees the stopped runs" \
	jq -e --argjson b "$base" "$k [.trace[0:20][] | .best | k] | last != \$b" "$T_TMP/stop.json"
check "blind to them, the best is the baseline for 40 runs" \
	jq -e --argjson b "$base" "$k [.trace[0:40][] | .best | k] | unique == [\$b]" "$T_TMP/blind.json"
check "the best is always a configuration with a run that finished" \
	jq -e "$k reduce .trace[] as \$r ({fin: [], bad: 0};
		.fin += (if \$r.stopped == null and \$r.proven then [\$r.config | k] else [] end)
		| .bad += (if (.fin | index(\$r.best | k)) == null then 1 else 0 end)) | .bad == 0" \
	"$T_TMP/stop.json"
check "with and without the rule, the same runs until the first stop" \
	jq -e -s '(.[0].trace | map(.stopped != null) | index(true)) as $k |
		[.[0].trace[0:$k + 1][] | [.config, .seed]] == [.[1].trace[0:$k + 1][] | [.config, .seed]]' \
	"$T_TMP/stop.json" "$T_TMP/nostop.json"
check "without the rule, where it would have stopped each run" \
	jq -e '[.trace[] | select(.would_stop != null and .would_secs < .secs)] | length >= 2' \
	"$T_TMP/nostop.json"
finish
