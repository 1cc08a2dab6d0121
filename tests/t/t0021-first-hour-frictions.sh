#!/usr/bin/env bash
# First-hour frictions a new user met (issue 35), each checked without
# Slurm: `auto on` again keeps what was spent and the limits it does not
# name, printing each change (issue 44); `space set` on a range holds
# the baseline's value and rounds the rest; a briefing can be read twice
# (`resume --again`) and is not marked seen when it was not written.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
dbw() { $PY -c "import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()" "$d/.xloop/state.db" "$1"; }
seen() { db "SELECT coalesce((SELECT value FROM kv WHERE key = 'briefing_seen'), 0)"; }
new_study "$d" fr ''
printf '#!/bin/bash\nLEARNING_RATE=0.1\nX=3\necho START\n' >"$T_TMP/base.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "chmod 644 base.sh cv.json" chmod 644 "$T_TMP/base.sh" "$T_TMP/cv.json"
step "adopt base" u adopt "$T_TMP/base.sh" --tag base --cv "$T_TMP/cv.json"

# b. auto on again, to raise the budget, keeps what was spent
step "space set X" u space set X=1..9:int
step "new x2" u new x2 --from base --set X=2
step "auto on --budget-runs 3" u auto on --budget-runs 3
since=$($PY -c "import json; print(json.load(open('$d/xloop.json'))['autopilot']['since'])")
step "a proposal that became run x2" dbw "INSERT INTO proposal (study, at, kind, parent, var, value, tag, config_key, reason, run_id, status) VALUES ('fr', $since, 'change', 'base', 'X', '2', 'x2', 'k', 'r', (SELECT id FROM run WHERE tag = 'x2'), 'decided')"
check "1 run spent" test "$(u auto status --json | jget .spent_runs)" = 1
u auto on --budget-runs 800 >"$T_TMP/on.txt" 2>&1
check "auto on --budget-runs 800 says what was spent" grep -q 'spent so far: 1 run' "$T_TMP/on.txt"
check "and the 1 run stays spent" test "$(u auto status --json | jget .spent_runs)" = 1
check "since is kept" test "$($PY -c "import json; print(json.load(open('$d/xloop.json'))['autopilot']['since'])")" = "$since"
# issue 44: auto on again keeps the limits it does not name, and prints each change
u auto on --budget-hours 5 >"$T_TMP/on2.txt" 2>&1
check "auto on --budget-hours 5 prints the change" grep -q '^  autopilot.budget_hours: none -> 5$' "$T_TMP/on2.txt"
check "and keeps the 800 runs it did not name" sh -c "grep -q '^  autopilot.budget_runs: 800, kept (--budget-runs not given)$' '$T_TMP/on2.txt' && grep -q '\"budget_runs\": 800' '$d/xloop.json'"
check "it says what is submitted first (here x2, a proposal this test made)" grep -q "^first: autopilot's proposal x2, made already" "$T_TMP/on2.txt"
check "and who submits it" grep -q '^`xloop next` or `xloop tick` submits it (driver.mode none' "$T_TMP/on2.txt"
u --json auto on --budget-runs 0 >"$T_TMP/on3.json" 2>/dev/null
validates "auto on --json validates" auto "$T_TMP/on3.json"
check "--budget-runs 0 removes the limit, a change in --json" sh -c "tr -d ' \n' <'$T_TMP/on3.json' | grep -q '\"changes\":\[{\"key\":\"autopilot.budget_runs\",\"from\":\"800\",\"to\":\"none\"}\].*\"feeder\":null'"
step "auto off" u auto off
u auto on >"$T_TMP/on4.txt" 2>&1
check "auto on after off: on, and the 5 GPU-hours kept" sh -c "grep -q '^  autopilot.on: false -> true$' '$T_TMP/on4.txt' && grep -q '^  autopilot.budget_hours: 5, kept' '$T_TMP/on4.txt'"
step "auto off" u auto off

# d. a log range holds the baseline's 0.1; its other values are rounded
u space set LEARNING_RATE=0.01..0.3:log >"$T_TMP/sp.txt" 2>&1
vals=$(u space ls --json | $PY -c "import json,sys; print(','.join([v for v in json.load(sys.stdin)['space'] if v['var'] == 'LEARNING_RATE'][0]['values']))")
check "the grid holds the baseline's 0.1 ($vals)" sh -c "echo ',$vals,' | grep -q ',0.1,'"
check "its values are rounded: 0.015, not 0.0152982 ($vals)" sh -c "echo ',$vals,' | grep -q ',0.015,' && ! echo '$vals' | grep -q '0.01529'"
check "still 9 values from 0.01 to 0.3" test "$(echo "$vals" | tr ',' '\n' | sed -n '1p;$p' | paste -sd' ') $(echo "$vals" | tr ',' '\n' | wc -l)" = "0.01 0.3 9"
check "space set says so" grep -q "the grid holds the baseline's LEARNING_RATE=0.1" "$T_TMP/sp.txt"
u space set LEARNING_RATE=0.2..0.5 >"$T_TMP/sp2.txt" 2>&1
check "a range without it warns and says how" grep -q "does not hold the baseline's value 0.1.*widen the range" "$T_TMP/sp2.txt"

# f. a briefing read twice
u resume >"$T_TMP/r1.txt" 2>/dev/null
check "resume says how to read it again" grep -q 'xloop resume --again' "$T_TMP/r1.txt"
u resume --again >"$T_TMP/r2.txt" 2>"$T_TMP/r2.err"
check "resume --again prints the same briefing" sh -c "tail -n +2 '$T_TMP/r2.txt' | diff - '$T_TMP/r1.txt' >/dev/null || { cat '$T_TMP/r2.err'; diff '$T_TMP/r2.txt' '$T_TMP/r1.txt'; exit 1; }"
check "and says it is the saved one" grep -q '^(the briefing `xloop resume` printed at' "$T_TMP/r2.txt"
step "something new to tell" dbw "INSERT INTO event (at, kind, detail) VALUES (strftime('%s'), 'repaired', 'a repair to be seen')"
seen=$(seen)
u resume >/dev/full 2>"$T_TMP/r3.err"
check "a briefing that could not be written stays unseen ($seen)" sh -c "test '$(seen)' = '$seen' || { cat '$T_TMP/r3.err'; exit 1; }"
check "and says so" grep -q 'did not reach its reader whole' "$T_TMP/r3.err"
u resume >"$T_TMP/r4.txt" 2>&1
check "so the next briefing still tells it" grep -q 'a repair to be seen' "$T_TMP/r4.txt"
check "a briefing written whole is seen" test "$(seen)" != "$seen"
# e. the job's own #SBATCH requests: offered, and taken with --take-sbatch
printf '#!/bin/bash\n#SBATCH -c 1\n#SBATCH --mem=1G --time=00:20:00\nX=3\necho START\n' >"$T_TMP/sb.sh"
step "chmod 644 sb.sh" chmod 644 "$T_TMP/sb.sh"
step "cpus 2, mem 16G, time 2 h" $PY -c "import json; p='$d/xloop.json'; c=json.load(open(p)); c['resources'].update(cpus=2, mem='16G', time='02:00:00'); json.dump(c, open(p, 'w'))"
u adopt "$T_TMP/sb.sh" --tag sb1 >"$T_TMP/a1.txt" 2>&1
check "adopt offers to take the job's own requests" grep -q 'adopt it with --take-sbatch' "$T_TMP/a1.txt"
expect_rc 0 "adopt --take-sbatch" u adopt "$T_TMP/sb.sh" --tag sb2 --take-sbatch
check "xloop.json has the job's 1 CPU, 1G, 20 min" test "$($PY -c "import json; r=json.load(open('$d/xloop.json'))['resources']; print(r['cpus'], r['mem'], r['time'])")" = "1 1G 00:20:00"
u adopt "$T_TMP/sb.sh" --tag sb3 >"$T_TMP/a3.txt" 2>&1
check "then adopt warns no more" sh -c "! grep -q warning '$T_TMP/a3.txt'"
# issue 44: a line --take-sbatch does not take is warned of, without advising the flag given
printf '#!/bin/bash\n#SBATCH -c 1\n#SBATCH --job-name=mine\nX=4\necho START\n' >"$T_TMP/sb4.sh"
step "chmod 644 sb4.sh" chmod 644 "$T_TMP/sb4.sh"
u adopt "$T_TMP/sb4.sh" --tag sb4 --take-sbatch >"$T_TMP/a4.txt" 2>&1
check "adopt --take-sbatch warns of the line it does not take" grep -q "'#SBATCH --job-name=mine' differs" "$T_TMP/a4.txt"
check "and does not advise --take-sbatch, given already" sh -c "! grep -q 'adopt it with --take-sbatch' '$T_TMP/a4.txt'"
check "it says what --take-sbatch takes" grep -q 'take-sbatch takes only the CPUs' "$T_TMP/a4.txt"
u adopt "$T_TMP/sb4.sh" --tag sb5 >"$T_TMP/a5.txt" 2>&1
check "nor is it advised when it would take nothing" sh -c "grep -q 'job-name=mine' '$T_TMP/a5.txt' && ! grep -q 'take-sbatch' '$T_TMP/a5.txt'"
finish
