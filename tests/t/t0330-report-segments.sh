#!/usr/bin/env bash
# xloop report with segmented attempts (no Slurm): the timeline draws each
# segment as its own bar in its attempt's colour, so the GPU's idle time
# between segments counts; a live segmented attempt shows "segment 3 (at
# most 20), 2 h 40 min so far" as status and the briefing do.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" rs ''

printf '#!/bin/bash\nLR=0.1\necho "START lr=$LR"\n' >"$T_TMP/job.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "job.sh, cv.json readable" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a segmented run" u new long --from base --set LR=0.2
expect_rc 0 "a live segmented run" u new live --from base --set LR=0.3

# "long": three segments L..L+10, L+11..L+20, L+20..L+30 (1 s idle between
# the first two); then "live": two ended segments and the third running,
# 2 h 40 min in all
now=$(date +%s)
step "segments in the DB" /usr/bin/python3 - "$d" "$now" <<'PY'
import sqlite3, sys
d, now = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(d + "/.xloop/state.db")
ids = {t: i for i, t in c.execute("SELECT id, tag FROM run")}
def att(tag, start, end, state, verdict, score, job):
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " submitted_at, started_at, ended_at, state, verdict, verdict_reason, score)"
              " VALUES (?, 1, ?, 'submitted', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (ids[tag], "tok-" + tag, job, "%s/runs/rs/%s/slurm/attempt1.out" % (d, tag),
               start - 5, start - 5, start, end, state, verdict,
               "COMPLETED 0:0" if verdict else None, score))
    return c.execute("SELECT last_insert_rowid()").fetchone()[0]
def seg(a, k, mx, start, end, state, job):
    c.execute("INSERT INTO segment (attempt_id, k, max, token, job_id, state, intent_at,"
              " started_at, ended_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (a, k, mx, "st-%d-%d" % (a, k), job, state, start - 5, start, end,
               "exit 85" if state == "continued" else None))
t0 = now - 9600
L = t0 - 30
a = att("long", L, L + 30, "COMPLETED", "success", 0.7, "201")
seg(a, 1, 4, L, L + 10, "continued", "201")
seg(a, 2, 4, L + 11, L + 20, "continued", "202")
seg(a, 3, 4, L + 20, L + 30, "last", "203")
seg(a, 4, 4, L + 30, None, "unneeded", "204")
a = att("live", t0, None, "RUNNING", None, None, "303")
seg(a, 1, 20, t0, t0 + 3000, "continued", "301")
seg(a, 2, 20, t0 + 3000, t0 + 6000, "continued", "302")
c.execute("INSERT INTO segment (attempt_id, k, max, token, job_id, state, intent_at)"
          " VALUES (?, 3, 20, 'st-live-3', '303', 'current', ?)", (a, t0 + 5990))
c.commit()
PY

step "report --json" u report --out "$d/r.html" --json >"$T_TMP/r.json" 2>"$T_TMP/r.err"
step "copy r.html" cp "$d/r.html" "$T_TMP/r.html"
validates "report --json validates" report "$T_TMP/r.json"
bars() { grep -o "<rect class=\"bar [a-z]*\"[^>]*><title>$1 attempt 1[^<]*" "$T_TMP/r.html"; }
check "the segmented attempt is three bars" test "$(bars long | wc -l)" = 3
check "  one per segment, titled so" test "$(bars long | grep -o 'segment [0-9]*' | tr '\n' ' ')" = "segment 1 segment 2 segment 3 "
check "  all in the attempt's colour" test "$(bars long | grep -c 'class="bar success"')" = 3
check "  the last one carries the attempt's state, the others 'continued'" \
	test "$(bars long | sed 's/.*, //' | tr '\n' ' ')" = "continued continued COMPLETED "
check "  each as long as its segment" test "$(bars long | grep -o ': [0-9]* s' | tr '\n' ' ')" = ": 10 s : 9 s : 10 s "
check "the live attempt: its ended segments and the running one" \
	test "$(bars live | grep -o 'segment [0-9]*' | tr '\n' ' ')" = "segment 1 segment 2 segment 3 "
check "  the running one from where the last ended" grep -q 'live attempt 1, segment 3: 3[0-9][0-9][0-9] s, RUNNING' "$T_TMP/r.html"
check "  in the live colour" test "$(bars live | grep -c 'class="bar live"')" = 3
check "the idle second between two segments counts" test "$(jget .idle_s <"$T_TMP/r.json")" = 1
check "the live attempt's detail: segment, limit, time so far" \
	grep -q 'segment 3 (at most 20), 2 h 40 min so far' "$T_TMP/r.html"

finish
