#!/usr/bin/env bash
# Issue 17's flat objective in process, without Slurm: autopilot's real
# proposer and promotion rule (`xloop test-search`) on an objective where
# every value scores the same plus seed noise, 10 fixed streams of 60 runs
# each: the best stays the baseline's configuration (the model's pick never
# reaches the probability the best moves at: CHOOSE_P, choose.h) in these
# 10 streams, while on the peak objective the same choice does move (the
# check is not vacuous). t1420 does the same through Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
for obj in flat peak; do
	for s in 1 2 3 4 5 6 7 8 9 10; do
		"$X" test-search --objective $obj --budget 60 --stream $s >"$T_TMP/$obj-$s.json" 2>/dev/null
	done
done
check "flat: 10 streams of up to 60 runs, the best never moves (it stays the baseline's)" \
	$PY - "$T_TMP"/flat-*.json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
assert len(docs) == 10, len(docs)
for d in docs:
    last = d["trace"][-1]
    assert last["runs"] >= 30, last
    assert all(t["promotions"] == 0 for t in d["trace"]), (d["stream"], last)
print(sum(d["trace"][-1]["runs"] for d in docs), "runs")
PY
check "peak: the same choice moves to real gains" $PY - "$T_TMP"/peak-*.json <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
assert len(docs) == 10 and all(d["trace"][-1]["promotions"] > 0 for d in docs), docs
PY

finish
