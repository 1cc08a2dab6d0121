#!/usr/bin/env bash
# xloop export (issue 36) without Slurm: one row per run (or per attempt)
# as CSV and as JSON Lines, from a study of adopted runs with scores, a
# seed and a search space. Every JSON line validates against
# schemas/export.schema.json; pandas reads the CSV with the dtypes the
# schema documents (each description ends with one) and gets the JSON
# lines' values back, a value with a comma, quotes and a line break
# included; pd.read_csv and pd.read_json(lines=True), given nothing else,
# give the same frame (issue 44: the space was nested in JSON Lines);
# export writes nothing (the DB and the files are as they were).
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
S=${XLOOP_ROOT_DIR:?}/schemas
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
if ! $PY -c 'import pandas' 2>/dev/null; then
	skip "export read by pandas" "python3-pandas is not installed"
	finish
	exit
fi
new_study "$d" ex ''
mk() {	# name LR SEED NOTE
	printf '#!/bin/bash\nLR=%s\nDEPTH=2\nSEED=%s\nNOTE=%s\necho START\n' "$2" "$3" "$4" >"$T_TMP/$1.sh"
	step "$1.sh readable" chmod 644 "$T_TMP/$1.sh"
}
cv() { echo "{\"score\": $2}" >"$T_TMP/$1.json"; step "$1.json readable" chmod 644 "$T_TMP/$1.json"; }
mk base 0.1 1 plain
cv c1 0.5
cv c2 0.625
step "adopt base" u adopt "$T_TMP/base.sh" --tag base --cv "$T_TMP/c1.json"
step "space seed SEED" u space seed SEED
step "space LR" u space set LR=0.1,0.2,0.3
step "space DEPTH" u space set DEPTH=1,2,3
step "new lr2" u new lr2 --from base --set LR=0.2
step "new odd: a value with a comma and quotes" u new odd --from base --set 'NOTE=a, "b"'
step "new odd2: a value with a line break" u new odd2 --from base --set 'NOTE=a
b'
before=$(tree_hash "$d")

expect_rc 0 "export exits 0" u export
u export >"$T_TMP/runs.csv" 2>"$T_TMP/err"
u export --format jsonl >"$T_TMP/runs.jsonl" 2>>"$T_TMP/err"
u export --attempts >"$T_TMP/att.csv" 2>>"$T_TMP/err"
u export --attempts --json >"$T_TMP/att.jsonl" 2>>"$T_TMP/err"
check "nothing on stderr" test ! -s "$T_TMP/err"
check "one run row a run, one attempt row an attempt" \
	test "$(wc -l <"$T_TMP/runs.jsonl"):$(wc -l <"$T_TMP/att.jsonl")" = "4:1"
valid_lines() {
	local l
	while IFS= read -r l; do
		printf '%s\n' "$l" | $PY "$(dirname "$0")/validate.py" "$S/export.schema.json" || return 1
	done <"$1"
}
check "every run line validates" valid_lines "$T_TMP/runs.jsonl"
check "every attempt line validates" valid_lines "$T_TMP/att.jsonl"
check "export wrote nothing" test "$(tree_hash "$d")" = "$before"
expect_rc 2 "a bad --format is a usage error" u export --format xlsx

# pandas reads the CSV with the documented dtypes and gets the JSON values
roundtrip() {	# CSV JSONL KIND (run: oneOf[0], attempt: oneOf[1])
	$PY - "$S/export.schema.json" "$@" <<'PY'
import json, re, sys
import pandas as pd
schema, csv, jsonl, kind = sys.argv[1:5]
row = json.load(open(schema))["oneOf"][0 if kind == "run" else 1]
props = row["properties"]
cols = list(pd.read_csv(csv, nrows=0).columns)
lines = [json.loads(l) for l in open(jsonl)]
want_cols = []
for k in props:
    want_cols.append(k)
    if k == "new_value":
        want_cols += [n for n in lines[0] if n.startswith("space.")]
assert cols == want_cols, (cols, want_cols)
assert all(list(l) == cols for l in lines), "a JSON line's keys are CSV's columns, in order"
# read as they come (issue 44): the same columns, the same dtypes, the same values
pd.testing.assert_frame_equal(pd.read_csv(csv), pd.read_json(jsonl, lines=True))
dtypes, dates = {}, []
for c in cols:
    p = row["patternProperties"]["^space\\."] if c.startswith("space.") else props[c]
    t = re.search(r"\((\w+)\)$", p["description"]).group(1)
    if t == "datetime64":
        dates.append(c)
    else:
        dtypes[c] = t
df = pd.read_csv(csv, dtype=dtypes, parse_dates=dates, keep_default_na=False,
                 na_values={c: [""] for c in cols}, float_precision="round_trip")
assert len(df) == len(lines), (len(df), len(lines))
flat = pd.DataFrame(lines)
for c in cols:
    for i in range(len(df)):
        a, b = df[c].iloc[i], flat[c].iloc[i] if c in flat else None
        if b is None or (isinstance(b, float) and b != b):
            assert pd.isna(a), (c, i, a, b)
        elif c in dates:
            assert a == pd.Timestamp(b), (c, i, a, b)
        else:
            assert a == b, (c, i, repr(a), repr(b))
            if dtypes[c] == "string":
                assert isinstance(a, str)
print("%d rows, %d columns" % df.shape)
PY
}
check "pandas reads the runs CSV with the documented dtypes: the JSON lines' values" \
	roundtrip "$T_TMP/runs.csv" "$T_TMP/runs.jsonl" run
check "  and the attempts CSV" roundtrip "$T_TMP/att.csv" "$T_TMP/att.jsonl" attempt
field() { $PY -c "import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r['tag'] == sys.argv[2]: print(json.dumps(eval(sys.argv[3], {}, {'r': r})))" "$T_TMP/runs.jsonl" "$@"; }
check "base: proven, its configuration the best, its score and seed" \
	test "$(field base '[r["proven"], r["best"], r["score"], r["seed"], r["space.LR"], r["space.DEPTH"]]')" = '[true, true, 0.5, "1", "0.1", "2"]'
check "lr2: its one change, not proven, no attempt" \
	test "$(field lr2 '[r["parent"], r["var"], r["old_value"], r["new_value"], r["proven"], r["attempts"], r["verdict"]]')" = '["base", "LR", "0.1", "0.2", false, 0, null]'
check "the run id is the one its jobs get (32 hex digits)" grep -Eq '^\["[0-9a-f]{32}"\]$' <<<"$(field base '[r["run_id"]]')"
check "one proven run: no estimate yet (null)" test "$(field base '[r["model_estimate"], r["model_sd"]]')" = '[null, null]'

# four more proven runs on the grid: the choice estimates each configuration,
# the best's estimate is the one status shows, and pandas reads it back
for i in 2 3 4 5; do
	mk m$i "0.$((i % 3 + 1))" $i plain
	cv s$i "0.$((i + 3))"
	step "adopt m$i" u adopt "$T_TMP/m$i.sh" --tag m$i --cv "$T_TMP/s$i.json"
done
u export --format jsonl >"$T_TMP/runs.jsonl" 2>"$T_TMP/err"
u export >"$T_TMP/runs.csv" 2>>"$T_TMP/err"
check "nothing on stderr (8 runs)" test ! -s "$T_TMP/err"
check "every run line validates (8 runs)" valid_lines "$T_TMP/runs.jsonl"
check "pandas reads the estimates back" roundtrip "$T_TMP/runs.csv" "$T_TMP/runs.jsonl" run
outlook=$(u status --json | $PY -c 'import json, sys; print(json.load(sys.stdin)["outlook"]["text"])')
best_est() { $PY -c "import json, re, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
b = [r for r in rows if r['best']]
m = re.search(r'(model|shrunken mean) ([-0-9.e]+) ± ([-0-9.e]+)', sys.argv[2])
assert b and m, (b, sys.argv[2])
e, sd = b[0]['model_estimate'], b[0]['model_sd']
assert isinstance(e, float) and sd > 0, (e, sd)
assert '%.4g' % e == m.group(2) and '%.2g' % sd == m.group(3), (e, sd, m.groups())
sp = lambda r: [v for k, v in r.items() if k.startswith('space.')]
same = [r['model_estimate'] for r in rows if sp(r) == sp(b[0])]
assert len(set(same)) == 1, same" "$T_TMP/runs.jsonl" "$outlook"; }
check "the best's estimate in export is the one status shows" best_est
# issue 44: status's headline is that estimate, labelled, the raw mean and n beside it
head_est() { $PY -c "import re, sys
h = re.search(r'best (\\S+): score (model|shrunken mean) ([-0-9.e]+) ± ([-0-9.e]+) \\(raw mean ([-0-9.e]+), n=([0-9]+)\\)$', sys.argv[1].splitlines()[0])
o = re.search(r'(model|shrunken mean) ([-0-9.e]+) ± ([-0-9.e]+)', sys.argv[2])
assert h and o and h.group(2, 3, 4) == o.group(1, 2, 3), (sys.argv[1].splitlines()[0], sys.argv[2])" "$(u status)" "$outlook"; }
check "status's headline is the choice's estimate, the raw mean and n beside it" head_est
finish
