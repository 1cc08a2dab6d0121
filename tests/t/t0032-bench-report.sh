#!/usr/bin/env bash
# bench/report.py and the runs with steps (issue 28): from a results
# directory like bench/gap.sh's modes steps, stepsfold and stepsafter write,
# `--steps` (bench/run.sh steps) rewrites only the steps part of
# BENCHMARKS.md and its headline row; the whole file keeps the sections
# other runs write (5: bench search, 6: the driver, the chaos soak and its
# "Other runs"), and a run without steps keeps the last steps part. The goal
# is said as seen: met, or missed. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

R=${XLOOP_ROOT_DIR:?}
PY=/usr/bin/python3
REP=$R/bench/report.py
cp "$R/BENCHMARKS.md" "$T_TMP/old.md"
sum=$(cksum <"$R/BENCHMARKS.md")

# results DIR GAPS_E: the four ways of 6 runs, (e)'s trainings with gaps GAPS_E
results() {
	mkdir -p "$1"
	$PY - "$1" "$2" <<'PY'
import json, os, sys
d, ge = sys.argv[1], [int(x) for x in sys.argv[2].split(",")]
def put(name, doc):
    json.dump(doc, open(os.path.join(d, name), "w"))
def jobs(first, dur, gaps):
    out, t = [], first
    for k in range(len(gaps) + 1):
        out.append({"id": str(100 + k), "name": "X-%d" % k, "state": "COMPLETED",
                    "submit": t, "start": t, "end": t + dur})
        if k < len(gaps):
            t += dur + gaps[k]
    return out
for mode, dur, gaps, tail in (("steps", 10, ge, 30), ("stepsd2", 10, [0, 0, 1, 0, 0], 30),
                              ("stepsfold", 40, [0, 1, 0, 0, 0], 0),
                              ("stepsafter", 10, [31, 31, 32, 31, 31], 30)):
    j = jobs(1000, dur, gaps)
    put("gap-%s.json" % mode, {"mode": mode, "jobs": j, "missing": [], "gaps": gaps,
                               "busy_s": dur * len(j), "idle_s": sum(gaps),
                               "span_s": j[-1]["end"] - j[0]["start"],
                               "span_all_s": j[-1]["end"] + tail - j[0]["start"],
                               "full_none_waiting": {"count": 7, "first": "fed nothing: full"}})
    put("took-gap-%s.json" % mode, {"gap-" + mode: 100.0, "load": [1.25, 1.5]})
put("cluster-gap-steps.json", {"profile": "basic+gpus4", "cpus": 8, "gres": "gpu:4"})
put("gap-config.json", {"run_secs": 10, "eval_secs": 30, "runs": {"steps": 6, "stepsfold": 6,
                                                                   "stepsafter": 6}})
put("machine.json", {"date": "2026-12-03 10:00 UTC", "nproc": 2})
PY
}
results "$T_TMP/miss" 0,22,0,24,0
results "$T_TMP/met" 0,1,0,2,0
mkdir -p "$T_TMP/none"

step "report.py --steps, (e) with gaps of 22 and 24 s" \
	$PY "$REP" "$T_TMP/miss" --steps --old "$T_TMP/old.md" >"$T_TMP/miss.md"
step "report.py --steps, (e) with gaps of at most 2 s" \
	$PY "$REP" "$T_TMP/met" --steps --old "$T_TMP/old.md" >"$T_TMP/met.md"
step "report.py --steps on its own output" \
	$PY "$REP" "$T_TMP/met" --steps --old "$T_TMP/met.md" >"$T_TMP/met2.md"
step "the whole file from the steps results alone" \
	$PY "$REP" "$T_TMP/met" --old "$T_TMP/old.md" >"$T_TMP/full.md"
step "the whole file from results without steps" \
	$PY "$REP" "$T_TMP/none" --old "$T_TMP/met.md" >"$T_TMP/nosteps.md"

# part FILE START: FILE's lines from the one starting with START to the next "## "
part() {
	$PY - "$1" "$2" <<'PY'
import sys
ln = open(sys.argv[1]).read().split("\n")
i = next(k for k, x in enumerate(ln) if x.startswith(sys.argv[2]))
j = next((k for k in range(i + 1, len(ln)) if ln[k].startswith("## ")), len(ln))
print("\n".join(ln[i:j]))
PY
}
# outside FILE: FILE without the steps part and the steps headline row
outside() {
	$PY - "$1" <<'PY'
import sys
ln = open(sys.argv[1]).read().split("\n")
i = next(k for k, x in enumerate(ln) if x.startswith("**Runs with steps**"))
j = next(k for k in range(i + 1, len(ln)) if ln[k].startswith("## "))
print("\n".join(x for x in ln[:i] + ln[j:] if not x.startswith("| GPU idle gap between trainings")))
PY
}
check "--steps changes nothing outside the steps part and its headline row" \
	test "$(outside "$T_TMP/met.md")" = "$(outside "$T_TMP/old.md")"
check "the steps table has the three ways, gaps from the results" sh -c "
	grep -qE '^\| \(e\) xloop.s steps.* \| 6 \| 0, 1, 0, 2, 0 \| 0 s \| 2 s \| 3 s \| 10 s \| 93 s \|' '$T_TMP/met.md' &&
	grep -qE '^\| \(f\) the evaluation folded into job.sh.* \| 6 \| 0, 1, 0, 0, 0 \| 0 s \| 1 s \| 1 s \| 40 s \|' '$T_TMP/met.md' &&
	grep -qE '^\| \(g\) by hand .* \| 6 \| 31, 31, 32, 31, 31 \| 31 s \| 32 s \| 156 s \| 10 s \|' '$T_TMP/met.md'"
check "queue.depth 2 beside it (e2)" sh -c "
	grep -qE '^\| \(e2\) the same with .queue.depth. 2 \| 6 \| 0, 0, 1, 0, 0 \|' '$T_TMP/met.md' &&
	grep -q 'With .queue.depth. 2 (e2): gaps median 0 s, max 1 s.' '$T_TMP/met.md'"
check "a missed goal says how often next fed nothing with no job waiting" sh -c "
	grep -q '7 of the agent.s .next. calls fed nothing with no job waiting' '$T_TMP/miss.md' &&
	! grep -q 'calls fed nothing with no job waiting' '$T_TMP/met.md'"
check "the profile and the load are named" sh -c "
	grep -q 'profile basic+gpus4, 8 CPUs' '$T_TMP/met.md' && grep -q 'steps 1.25 to 1.5' '$T_TMP/met.md'"
check "gaps of at most 2 s: the goal is met, in the text and the headline" sh -c "
	grep -q 'The goal (issue 28.*: \*\*met\*\*' '$T_TMP/met.md' &&
	grep -qE '^\| GPU idle gap between trainings.* \| median 0 s, max 2 s \| .* \| met \|' '$T_TMP/met.md'"
check "gaps of 22 and 24 s: the goal is missed, in the text and the headline" sh -c "
	grep -q 'The goal (issue 28.*: \*\*missed\*\*' '$T_TMP/miss.md' &&
	grep -qE '^\| GPU idle gap between trainings.* \| median 0 s, max 24 s \| .* \| \*\*missed\*\* \|' '$T_TMP/miss.md'"
check "it says the part was measured on its own" grep -q 'measured on its own on 2026-12-03 10:00 UTC by `./build.sh bench steps`' "$T_TMP/met.md"
check "a second --steps gives the same file" cmp -s "$T_TMP/met.md" "$T_TMP/met2.md"
check "one steps part, one steps headline row" sh -c "
	[ \$(grep -c '^\*\*Runs with steps\*\*' '$T_TMP/met2.md') = 1 ] &&
	[ \$(grep -c '^| GPU idle gap between trainings' '$T_TMP/met2.md') = 1 ]"
for s in '## 5. Search' '## 6. The Slurm driver' '## 7. A long study' '## Chaos soak'; do
	check "the whole file keeps '$s' as it was" test "$(part "$T_TMP/full.md" "$s")" = "$(part "$T_TMP/old.md" "$s")"
done
check "the soak's Other runs are kept" grep -q '^### Other runs' "$T_TMP/full.md"
check "the whole file has this run's steps table" grep -qE '^\| \(e\) xloop.s steps.* \| 0, 1, 0, 2, 0 \|' "$T_TMP/full.md"
kept=$(part "$T_TMP/nosteps.md" '**Runs with steps**' 2>&1)
check "a run without steps keeps the last steps part and its headline row" sh -c "
	grep -q '^\*\*Runs with steps\*\*' '$T_TMP/met.md' && [ \"\$1\" = \"\$2\" ] &&
	grep -qE '^\| GPU idle gap between trainings.* \| median 0 s, max 2 s \|' '$T_TMP/nosteps.md'" - \
	"$kept" "$(part "$T_TMP/met.md" '**Runs with steps**')"
check "the checkout's BENCHMARKS.md is untouched" test "$(cksum <"$R/BENCHMARKS.md")" = "$sum"
finish
