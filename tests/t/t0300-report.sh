#!/usr/bin/env bash
# xloop report: one self-contained HTML page, checked in a real headless
# Chromium (no console errors, not blank, every run in the DOM) on a study
# whose attempts are written into its state DB with known times, so the
# idle gaps are known. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" rep 'c["metric"]["name"] = "acc"'

printf '#!/bin/bash\nLR=0.1\nDEPTH=3\necho "START lr=$LR"\n' >"$T_TMP/job.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "job.sh, cv.json readable" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a child" u new lr-small --from base --set LR=0.01
expect_rc 0 "a failing child" u new depth-9 --from base --set DEPTH=9
expect_rc 0 "a grandchild" u new deeper --from lr-small --set DEPTH=4 --force
expect_rc 0 "a child with markup in its value" u new odd --from base --set 'LR=<script>alert(1)</script>&'
expect_rc 0 "a running child" u new live --from base --set LR=0.2
step "a failed attempt's log" as_user sh -c "printf 'START lr=0.1\nfold 1/5\nTraceback (most recent call last):\nValueError: depth <9> is too deep\nFAILED\n' >'$d/runs/rep/depth-9/slurm/attempt1.out'"

# attempts with known times: busy 1000-1010, 1012-1020, 1030-1040 (and a
# running one inside): 2 s + 10 s idle over 40 s
step "attempts in the DB" /usr/bin/python3 - "$d" <<'PY'
import sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/.xloop/state.db")
ids = {t: i for i, t in c.execute("SELECT id, tag FROM run")}
def att(tag, n, start, end, state, verdict, score, reason, cls=None):
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " submitted_at, started_at, ended_at, state, verdict, failure_class,"
              " verdict_reason, score) VALUES (?, ?, ?, 'submitted', ?, ?, ?, ?, ?, ?, ?, ?,"
              " ?, ?, ?)", (ids[tag], n, "tok-%s-%d" % (tag, n), str(100 + ids[tag] * 10 + n),
              "%s/runs/rep/%s/slurm/attempt%d.out" % (d, tag, n), start - 5, start - 5,
              start, end, state, verdict, cls, reason, score))
att("lr-small", 1, 1000, 1010, "COMPLETED", "success", 0.7, "COMPLETED 0:0, score 0.7")
att("depth-9", 1, 1012, 1020, "FAILED", "failure", None, "FAILED (ExitCode 1:0)", "program")
att("deeper", 1, 1030, 1040, "COMPLETED", "success", 0.9, "COMPLETED 0:0, score 0.9")
att("odd", 1, 1032, 1036, "COMPLETED", "success", 0.6, "COMPLETED 0:0, score 0.6")
c.commit()
PY

o=$(user_dir)
step "report --json" u report --out "$o/r.html" --json >"$T_TMP/r.json" 2>"$T_TMP/r.err"
step "copy r.html" cp "$o/r.html" "$T_TMP/r.html"
validates "report --json validates" report "$T_TMP/r.json"
check "it counts 12 s idle over 40 s" test "$(jget .idle_s <"$T_TMP/r.json") $(jget .span_s <"$T_TMP/r.json")" = "12 40"
check "the page states the idle share" grep -q 'GPU idle 30.0% of the study: 12 s' "$T_TMP/r.html"
check "the page is self-contained" sh -c "! grep -Eiq '<script|<link|src=|url\\(|@import|https?://[^\"]*\\.(js|css)' '$T_TMP/r.html'"
check "markup in a value is escaped" grep -q '&lt;script&gt;alert(1)&lt;/script&gt;&amp;' "$T_TMP/r.html"
check "the failure's log tail is shown" grep -q 'ValueError: depth &lt;9&gt; is too deep' "$T_TMP/r.html"
check "the best run is highlighted" grep -q 'class="run success best" data-tag="deeper"' "$T_TMP/r.html"
expect_rc 0 "the default path" u report
check "is report.html at the study root" test -s "$d/report.html"
check "which git ignores" sh -c "runuser -u '$XLOOP_TEST_USER' -- git -C '$d' check-ignore -q report.html"

# the same study on several nodes (issue 34): a GPU row is a node's GPU,
# "node1 GPU 0"; lr-small ran across node[1-2] and is drawn on both rows;
# the study's idle time counts time, not rows (12 s over 40 s, as above)
dn=$(user_dir)
new_study "$dn" rep 'c["metric"]["name"] = "acc"'
step "its baseline" as_user "$X" -C "$dn" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
for r in lr-small:LR=0.01 depth-9:DEPTH=9 deeper:DEPTH=4 odd:LR=0.3; do
	step "run ${r%%:*}" as_user "$X" -C "$dn" new "${r%%:*}" --from base --set "${r#*:}"
done
step "attempts on nodes in the DB" /usr/bin/python3 - "$dn" <<'PY'
import sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/.xloop/state.db")
ids = {t: i for i, t in c.execute("SELECT id, tag FROM run")}
for tag, start, end, node, gpus in (("lr-small", 1000, 1010, "node[1-2]", "0"),
                                    ("depth-9", 1012, 1020, "node2", "0"),
                                    ("deeper", 1030, 1040, "node10", "1"),
                                    ("odd", 1032, 1036, "node1", "0")):
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " submitted_at, started_at, ended_at, state, verdict, verdict_reason, node, gpus)"
              " VALUES (?, 1, ?, 'submitted', ?, ?, ?, ?, ?, ?, 'COMPLETED', 'success', 'ok', ?, ?)",
              (ids[tag], "tok-" + tag, str(200 + ids[tag]), "%s/runs/rep/%s/slurm/attempt1.out"
               % (d, tag), start - 5, start - 5, start, end, node, gpus))
c.commit()
PY
step "report --json of the study on nodes" as_user "$X" -C "$dn" report --out "$dn/r.html" --json >"$T_TMP/rn.json"
validates "report --json on nodes validates" report "$T_TMP/rn.json"
check "report --json: a row per node's GPU, the 2-node run on node1's and node2's" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
g = [(x["node"], x["gpu"], x["busy_s"]) for x in r["gpus"]]
print(g, r["idle_s"], r["span_s"])
assert g == [("node1", 0, 14), ("node2", 0, 18), ("node10", 1, 10)], g
assert (r["idle_s"], r["span_s"]) == (12, 40), "idle counts rows"' "$T_TMP/rn.json"
check "the page names the rows by node" sh -c "grep -q '>node1 GPU 0</text>' '$dn/r.html' &&
	grep -q '>node2 GPU 0</text>' '$dn/r.html' && grep -q '>node10 GPU 1</text>' '$dn/r.html'"
check "the 2-node run is drawn on both nodes' rows" test "$(grep -c '<title>lr-small attempt 1: 10 s, COMPLETED, on node[12] (one of 2 nodes)</title>' "$dn/r.html")" = 2

if ! command -v chromium >/dev/null; then
	skip "the page in Chromium" "chromium is not installed"
	finish
	exit
fi
ud=$(mktemp -d "$T_TMP/chromium-XXXXXX")
chrome() {
	timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$ud" --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$T_TMP/r.html" >"$T_TMP/dom.html" 2>"$T_TMP/dom.err"
check "Chromium loads the page" grep -q '<h1>Study rep</h1>' "$T_TMP/dom.html"
check "no console message" sh -c "! grep -Ei 'CONSOLE|Uncaught|Refused|ERR_FILE' '$T_TMP/dom.err'"
for t in base lr-small depth-9 deeper odd live; do
	check "the DOM holds run $t (leaderboard, tree, detail)" sh -c "
		grep -q 'class=\"run [a-z ]*\" data-tag=\"$t\"' '$T_TMP/dom.html' &&
		grep -q 'class=\"node [a-z ]*\" data-tag=\"$t\"' '$T_TMP/dom.html' &&
		grep -q 'id=\"run-$t\"' '$T_TMP/dom.html'"
done
check "no script element came out of the value" sh -c "! grep -qi '<script' '$T_TMP/dom.html'"
chrome --window-size=1100,1400 --screenshot="$T_TMP/r.png" "file://$T_TMP/r.html" >/dev/null 2>&1
# not blank: many distinct colours in the decoded pixels
check "the screenshot is not blank" /usr/bin/python3 - "$T_TMP/r.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
colours = {raw[i:i + 3] for i in range(1, len(raw), 4 * 7)}
print(len(colours), "colours sampled")
assert len(colours) > 20, "the page looks blank"
PY

# a study of 60 runs, as one that ran for a day: a hill-climbing chain of
# 45 (the best at its end, 45 deep), branches with failures, a 64-character
# tag and a 200-character value, on 8 nodes of 2 GPUs (and a ninth).
# Measured in Chromium: nothing wider than the page, no box cutting its name
# off, no label (a row's name among them) outside its chart or on a box,
# the best path drawn apart.
d6=$(user_dir)
new_study "$d6" big '' 2>/dev/null
step "60 runs in the DB" /usr/bin/python3 - "$d6" <<'PY'
import sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/.xloop/state.db")
def run(tag, parent, var=None, old=None, new=None):
    c.execute("INSERT INTO run (study, tag, parent_id, var, old_value, new_value, created_at)"
              " VALUES ('big', ?, ?, ?, ?, ?, 1000)", (tag, parent, var, old, new))
    return c.execute("SELECT last_insert_rowid()").fetchone()[0]
def att(rid, t, verdict, score, state):
    # on 8 nodes of 2 GPUs, every 7th across two of them (node 9 too)
    node = "gpu-node-%02d" % (rid % 8 + 1) if rid % 7 else "gpu-node-[%02d-%02d]" % (rid % 8 + 1, rid % 8 + 2)
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " submitted_at, started_at, ended_at, state, verdict, failure_class,"
              " verdict_reason, score, node, gpus) VALUES (?, 1, ?, 'submitted', ?, ?, ?, ?, ?,"
              " ?, ?, ?, ?, ?, ?, ?, ?)", (rid, "tok-%d" % rid, str(5000 + rid),
              d + "/runs/big/x/slurm/attempt1.out", t - 5, t - 5, t, t + 50, state, verdict,
              None if verdict == "success" else "program", state, score, node, str(rid // 8 % 2)))
ids = [run("baseline", None)]
att(ids[0], 1000, "success", 0.5, "COMPLETED")
t = 1060
for i in range(45):
    rid = run("hill-climb-step-%02d-lr-warmup-cosine" % i, ids[-1],
              "LEARNING_RATE_WARMUP_STEPS", str(100 + i), str(101 + i))
    att(rid, t, "success", 0.5 + 0.01 * (i + 1), "COMPLETED")
    ids.append(rid)
    t += 60
for j in range(14):
    parent = ids[3 * j + 1]
    tag = ("branch-%02d-" % j) + ("x" * 54 if j == 0 else "dropout")
    value = "v" * 200 if j == 1 else "0.%d" % j
    rid = run(tag, parent, "DROPOUT", "0.1", value)
    att(rid, t, "failure" if j % 3 == 0 else "success", None if j % 3 == 0 else 0.4,
        "FAILED" if j % 3 == 0 else "COMPLETED")
    t += 60
c.commit()
print(len(ids) + 14, "runs")
PY
step "report of 60 runs" as_user "$X" -C "$d6" report --out "$d6/r60.html" >/dev/null 2>&1
step "copy r60.html" cp "$d6/r60.html" "$T_TMP/r60.html"
check "the 60-run report names the best path's end" grep -q 'class="node success bestpath" data-tag="hill-climb-step-44-lr-warmup-cosine"' "$T_TMP/r60.html"
check "its timeline has a row per node's GPU, 16 and more" test "$(grep -c '<text class="gpu" x="[0-9]*" y="[0-9]*">gpu-node-[0-9]* GPU [01]</text>' "$T_TMP/r60.html")" -ge 16
# a copy with a measuring script (the report itself has none)
step "the measuring page" sed 's|</body>|<script>\
const W = document.documentElement.clientWidth, out = [];\
if (document.documentElement.scrollWidth > W) out.push("page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);\
for (const e of document.body.querySelectorAll("*")) { const r = e.getBoundingClientRect();\
  if (r.width \&\& (r.right > W + 0.5 \|\| r.left < -0.5)) out.push("wider than the page: " + e.tagName + "." + (e.getAttribute("class") \|\| "") + " " + Math.round(r.left) + ".." + Math.round(r.right)); }\
for (const g of document.querySelectorAll("svg.tree g.node")) { const b = g.querySelector("rect").getBoundingClientRect(), t = g.querySelector("text").getBoundingClientRect();\
  if (t.left < b.left - 0.5 \|\| t.right > b.right + 0.5) out.push("name cut off by its box: " + g.dataset.tag); }\
for (const t of document.querySelectorAll("svg text")) { const r = t.getBoundingClientRect(), s = t.ownerSVGElement.getBoundingClientRect();\
  if (r.left < s.left - 0.5 \|\| r.right > s.right + 0.5 \|\| r.top < s.top - 0.5 \|\| r.bottom > s.bottom + 0.5) out.push("label clipped by its chart: " + t.textContent.slice(0, 50)); }\
const boxes = [...document.querySelectorAll("svg.tree g.node rect")].map(r => r.getBoundingClientRect());\
for (const t of document.querySelectorAll("svg.tree text.elabel")) { const r = t.getBoundingClientRect();\
  if (boxes.some(b => r.left < b.right \&\& r.right > b.left \&\& r.top < b.bottom \&\& r.bottom > b.top)) out.push("label on a box: " + t.textContent.slice(0, 50)); }\
for (const t of document.querySelectorAll("svg.timeline text.blabel")) { const r = t.getBoundingClientRect(), b = t.previousElementSibling.getBoundingClientRect();\
  if (r.left < b.left - 0.5 \|\| r.right > b.right + 0.5) out.push("bar label outside its bar: " + t.textContent); }\
const best = document.querySelectorAll("svg.tree g.node.bestpath"), bw = best.length ? getComputedStyle(best[0].querySelector("rect")).strokeWidth : "";\
const m = document.createElement("pre"); m.textContent = "MEASURE " + JSON.stringify({width: W, nodes: document.querySelectorAll("svg.tree g.node").length, bestpath: best.length, bestStroke: bw, problems: out});\
document.body.appendChild(m);</script></body>|' "$T_TMP/r60.html" >"$T_TMP/m60.html"
for w in 1280 800; do
	chrome --window-size=$w,1000 --dump-dom "file://$T_TMP/m60.html" 2>/dev/null | grep -o 'MEASURE {.*}' | sed 's/^MEASURE //; s/&quot;/"/g; s/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g' >"$T_TMP/m60-$w.json"
	check "at $w px: the browser measured the 60-run page" test -s "$T_TMP/m60-$w.json"
	check "at $w px: nothing overflows the page, no name or label is clipped" /usr/bin/python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m['nodes'] == 60, m['nodes']
assert not m['problems'], '\\n'.join(m['problems'][:15])" "$T_TMP/m60-$w.json"
	check "at $w px: the best path stands out (46 runs, a thick stroke)" /usr/bin/python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
assert m['bestpath'] == 46 and float(m['bestStroke'].rstrip('px')) >= 3, m" "$T_TMP/m60-$w.json"
done
# the 60-run page as a picture, for a person to look at (XLOOP_SHOT_DIR):
# a fifth Chromium of a 1280x5200 page is not spent when nobody looks
if [ -n "${XLOOP_SHOT_DIR:-}" ]; then
	chrome --window-size=1280,5200 --screenshot="$T_TMP/r60.png" "file://$T_TMP/r60.html" >/dev/null 2>&1
	check "a screenshot of the 60-run page" test -s "$T_TMP/r60.png"
	cp "$T_TMP/m60-800.json" "$T_TMP/r60.png" "$T_TMP/r60.html" "$T_TMP/m60-1280.json" "$XLOOP_SHOT_DIR/" 2>/dev/null
else
	skip "a screenshot of the 60-run page" "XLOOP_SHOT_DIR is not set"
fi
finish
