#!/usr/bin/env bash
# Issue 17 without Slurm. "Already run or queued" is the same
# CONFIGURATION (the job.sh's assignments but the seed), whatever parent
# and change lead to it: plan add, new and next --set refuse one that a run
# has or that the plan will make, naming which; a change of the seed (a
# replicate) is refused only when its configuration has that seed. And
# autopilot's budget as `auto status` counts it from a state DB written
# here: --budget-runs counts every run autopilot created, failures
# included, not its proposals that never became a run, not plan entries,
# not infra retries; --budget-hours counts elapsed x GPUs of every attempt.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" ct ''
mk() {	# name X Y SEED
	printf '#!/bin/bash\nX=%s\nY=%s\nSEED=%s\necho "START x=$X y=$Y"\n' "$2" "$3" "$4" >"$T_TMP/$1.sh"
	step "$1.sh readable" chmod 644 "$T_TMP/$1.sh"
}
mk base 1 1 1
mk b2 2 2 1
mk b3 5 3 1
mk s7 1 1 7
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "cv.json readable" chmod 644 "$T_TMP/cv.json"
step "adopt base" u adopt "$T_TMP/base.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "space seed SEED" u space seed SEED >/dev/null
refused() {	# name pattern CMD...: exit 65 and stderr matching pattern
	local name=$1 pat=$2 out rc
	shift 2
	out=$(as_user "$X" -C "$d" "$@" 2>&1)
	rc=$?
	if [ "$rc" = 65 ] && grep -q -- "$pat" <<<"$out"; then ok "$name"; else not_ok "$name (exit $rc)" "$out"; fi
}

# a run has the configuration
expect_rc 0 "new a: X=2 from base" u new a --from base --set X=2
refused "plan add refuses the same change (another spelling)" 'made already: run a has that configuration' \
	plan add X=2.0 --from base
step "adopt b2" u adopt "$T_TMP/b2.sh" --tag b2 --cv "$T_TMP/cv.json" >/dev/null
refused "and another path to it (Y=1 from X=2 Y=2)" 'Y=1 from b2 was made already: run a has that configuration' \
	plan add Y=1 --from b2
refused "new refuses it too" 'run a has that configuration' new a2 --from b2 --set Y=1

# the plan will make the configuration
expect_rc 0 "plan Y=3 from base (X=1 Y=3)" u plan add Y=3 --from base
e1=$(db "SELECT id FROM plan WHERE var = 'Y'")
step "adopt b3" u adopt "$T_TMP/b3.sh" --tag b3 --cv "$T_TMP/cv.json" >/dev/null
refused "plan add refuses another path to what the plan makes" "in the plan already: entry $e1 (Y=3 from base)" \
	plan add X=1 --from b3
refused "new refuses what the plan will make" "entry $e1" new c --from b3 --set X=1
check "nothing was added or made by the refusals" test "$(db "SELECT count(*) FROM plan") $(db "SELECT count(*) FROM run")" = "1 4"
expect_rc 0 "new --force makes it anyway" u new c --from b3 --set X=1 --force

# replicates: the same configuration, a new seed
expect_rc 0 "plan a replicate of base (SEED=5)" u plan add SEED=5 --from base
refused "the same seed twice in the plan is refused" 'in the plan already' plan add SEED=5.0 --from base
refused "new refuses a seed the plan will run" 'in the plan already' new r5 --from base --set SEED=5
step "plan rm the SEED entry" u plan rm "$(db "SELECT id FROM plan WHERE var = 'SEED'")" >/dev/null
expect_rc 0 "new makes it once the entry is gone" u new r5 --from base --set SEED=5
refused "then the seed is taken" 'run r5 has that seed' plan add SEED=5 --from base
step "adopt s7" u adopt "$T_TMP/s7.sh" --tag s7 --cv "$T_TMP/cv.json" >/dev/null
refused "a seed another run of the configuration has is taken" 'run s7 has that seed' plan add SEED=7 --from base
expect_rc 0 "a fresh seed is not" u plan add SEED=8 --from base
expect_rc 0 "a change of the seed from another configuration is its own" u plan add SEED=5 --from b2

# --- the budget, as counted from the DB
f=$(user_dir)
v() { as_user "$X" -C "$f" "$@"; }
new_study "$f" bu ''
step "adopt base" v adopt "$T_TMP/base.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "space set X" v space set X=1..9:int >/dev/null
for x in 2 3 4 5; do step "new x$x" v new "x$x" --from base --set "X=$x" >/dev/null; done
step "auto on" v auto on --budget-runs 3 --budget-hours 1 >/dev/null
since=$($PY -c "import json; print(json.load(open('$f/xloop.json'))['autopilot']['since'])")
step "proposals and attempts in the DB" $PY - "$f/.xloop/state.db" "$since" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
since = int(sys.argv[2])
ids = {t: i for i, t in c.execute("SELECT id, tag FROM run")}
def prop(tag, status, run):
    c.execute("INSERT INTO proposal (study, at, kind, parent, var, value, tag, config_key,"
              " reason, run_id, status) VALUES ('bu', ?, 'change', 'base', 'X', ?, ?, ?, 'r', ?, ?)",
              (since, tag[1:], tag, "k-" + tag, ids.get(run), status))
def att(tag, n, secs, gres, verdict, cls=None):
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " started_at, ended_at, verdict, failure_class, gres, decided)"
              " VALUES (?, ?, ?, 'submitted', ?, 'l', 1, 1000, ?, ?, ?, ?, 1)",
              (ids[tag], n, "t-%s-%d" % (tag, n), str(ids[tag] * 10 + n), 1000 + secs,
               verdict, cls, gres))
prop("x2", "decided", "x2")      # failed in Slurm: counts
att("x2", 1, 1800, "gpu:2", "failure", "program")         # 1 GPU-hour
prop("x3", "decided", "x3")      # an infra failure, then its retry: one run
att("x3", 1, 360, "gpu:2", "failure", "infra")            # 0.2
att("x3", 2, 540, "gpu:2", "success")                     # 0.3
prop("x9", "failed", None)       # never became a run: not counted
att("x4", 1, 3600, "gpu:1", "success")                    # a plan's run: not counted
c.commit()
PY
step "auto status --json" v auto status --json >"$T_TMP/auto.json"
check "runs: proposals that became runs, failures included (2)" test "$(jget .spent_runs <"$T_TMP/auto.json")" = 2
check "hours: elapsed x GPUs of their attempts, the infra retry's too (1.5)" $PY -c "
import json; h = json.load(open('$T_TMP/auto.json'))['spent_gpu_hours']; assert abs(h - 1.5) < 1e-9, h"
check "1.5 of 1 GPU-hours stops it" grep -q 'budget spent: 1.50 of 1 GPU-hours' "$T_TMP/auto.json"
check "  in flight: none" test "$(jget .in_flight <"$T_TMP/auto.json")" = 0
# a job xloop has not seen end: its hours are counted up to now, and said so
# (one that ended since the last tick or next grows until one runs)
step "a second attempt of x2, started 30 min ago, not seen to end" $PY -c "
import sqlite3, time; c = sqlite3.connect('$f/.xloop/state.db')
c.execute(\"INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at, started_at, gres)\"
          \" SELECT id, 2, 't-x2-2', 'submitted', '999', 'l', 1, ?, 'gpu:2' FROM run WHERE tag = 'x2'\",
          (int(time.time()) - 1800,)); c.commit()"
v auto status --json >"$T_TMP/auto2.json"
check "  in flight: 1 attempt, about 1 of 2.5 GPU-hours" $PY -c "
import json; d = json.load(open('$T_TMP/auto2.json'))
assert d['in_flight'] == 1 and abs(d['in_flight_gpu_hours'] - 1.0) < 0.01 and abs(d['spent_gpu_hours'] - 2.5) < 0.01, d"
check "  the budget's stop says they are counted up to now" grep -q 'GPU-hours (runs in flight counted up to now)' "$T_TMP/auto2.json"
v auto status >"$T_TMP/auto2.txt"
check "  auto status says it" grep -q '^in flight: 1 job, 1.00 of those GPU-hours, counted up to now' "$T_TMP/auto2.txt"
validates "auto status --json validates" auto "$T_TMP/auto2.json"
step "x2's second attempt ends" $PY -c "import sqlite3; c = sqlite3.connect('$f/.xloop/state.db'); c.execute(\"DELETE FROM attempt WHERE token = 't-x2-2'\"); c.commit()"
step "auto on --budget-runs 2" v auto on --budget-runs 2 >/dev/null
since=$($PY -c "import json; print(json.load(open('$f/xloop.json'))['autopilot']['since'])")
step "proposals at since" $PY -c "import sqlite3; c = sqlite3.connect('$f/.xloop/state.db'); c.execute('UPDATE proposal SET at = $since'); c.commit()"
check "2 of 2 runs stops it" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$f' auto status | grep -q 'stopped: budget spent: 2 of 2 runs'"
step "proposals older" $PY -c "import sqlite3; c = sqlite3.connect('$f/.xloop/state.db'); c.execute('UPDATE proposal SET at = at - 10'); c.commit()"
step "auto on --budget-runs 3" v auto on --budget-runs 3 >/dev/null
check "runs from before \`auto on\` are not counted" test "$(v auto status --json | jget .spent_runs)" = 0

finish
