#!/usr/bin/env bash
# Sweeps on the real cluster: six values as one job array where one task
# exits 1 and one goes over its memory; the failed indexes (only those)
# resubmitted as a new array; a sweep that fully succeeded submits nothing;
# the memory sampler's data behind the OOM suggestion; Slurm output
# variables in the user's environment change nothing.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
# what a user's shell may carry; xloop must not let it change what it reads
hostile_env=(SQUEUE_FORMAT='%i' SQUEUE_STATES=RUNNING SACCT_FORMAT=JobID
	SLURM_TIME_FORMAT=relative SLURM_BITSTR_LEN=3 SQUEUE_SORT=-i)
uh() { as_user env "${hostile_env[@]}" "$X" -C "$d" "$@"; }

new_study "$d" sw 'c["resources"].update(cpus=1, mem="200M", time="00:02:00")
c["queue"]["depth"] = 0'

# CASE is a score, or "fail"/"fail4" (exit 1 until the file 'fixed' exists), or
# "oom" (600 MB, over a 200M limit). The sampler runs beside the job.
cat >"$T_TMP/job.sh" <<JOB
#!/bin/bash
set -u
CASE=0.5
"$X" sample --out "\$XLOOP_RUN_DIR/slurm/attempt\$XLOOP_ATTEMPT.mem" --every 1 &
echo "START case=\$CASE device=cpu"
sleep 2
case \$CASE in
fail | fail4) [ -e "\$XLOOP_ROOT/fixed" ] || { echo "Traceback: broken on purpose"; echo FAILED; exit 1; } ;;
oom) echo "train fold 1/1"; python3 -c "
import time
x = []
for i in range(60):
    x.append(bytearray(10 * 1024 * 1024)); time.sleep(0.1)" ;;
esac
python3 -c "import json; json.dump({'score': 0.5 if '\$CASE' in ('fail', 'fail4', 'oom') else float('\$CASE')}, open('\$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"

# bad requests change nothing (the DB file may be rewritten: compare its rows)
db_dump() { /usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1])
for t in ('run', 'attempt', 'sweep', 'sweep_task', 'plan'):
    print(t, c.execute('SELECT * FROM ' + t).fetchall())" "$d/.xloop/state.db"; }
h0=$(tree_hash "$d")
expect_rc 2 "an empty value is refused" u sweep --set CASE=0.1,,0.2
expect_rc 2 "a value given twice is refused" u sweep --set CASE=0.1,0.1
expect_rc 2 "a bad --max-parallel is refused" u sweep --set CASE=1,2 --max-parallel 0
expect_rc 2 "a bad --mem is refused" u sweep --set CASE=1,2 --mem lots
check "refused sweeps left the study as it was" test "$h0" = "$(tree_hash "$d")"
db0=$(db_dump)
expect_rc 65 "an unknown variable is refused" u sweep --set NOPE=1,2
check "and no sweep is left behind" test "$db0" = "$(db_dump)"

# without memory enforcement (the version matrix's chroots) index 4 fails
# as a program instead, and the OOM checks skip
oomcase=oom
mem_enforced || oomcase=fail4
uh sweep --set "CASE=0.1,0.2,fail,0.3,$oomcase,0.6" --max-parallel 2 --json \
	>"$T_TMP/sweep.json" 2>"$T_TMP/sweep.err"
check "sweep submitted" test -s "$T_TMP/sweep.json"
validates "sweep --json validates" sweep "$T_TMP/sweep.json"
name=$(jget .sweep <"$T_TMP/sweep.json")
arr=$(jget .array_job_id <"$T_TMP/sweep.json")
check "the sweep is named after its variable" test "$name" = CASE-sweep
check "one array of six with at most two at once" test "$(jget .array <"$T_TMP/sweep.json")" = "0-5%2"
check "task 4 is job <array>_4" test "$(jget .tasks.4.job_id <"$T_TMP/sweep.json")" = "${arr}_4"
check "slurm sees one array of six tasks" sh -c "as_user() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' \"\$@\"; }
	[ \$(as_user squeue -h -r -t all -j '$arr' -o %i | wc -l) = 6 ]"
check "each run's job.sh was committed" test "$(as_user git -C "$d" log --oneline -- runs/sw | grep -c 'xloop: new')" -ge 6
tag4=$(jget .tasks.4.tag <"$T_TMP/sweep.json")
tag2=$(jget .tasks.2.tag <"$T_TMP/sweep.json")

# drive the loop (with the hostile environment) until the array is gone
drive() {
	local i
	for i in $(seq 1 150); do
		uh next >>"$T_TMP/briefings.txt" 2>&1
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
		sleep 1
	done
	uh next >>"$T_TMP/briefings.txt" 2>&1
}
drive
step "sweep show --json" u sweep show "$name" --json >"$T_TMP/show1.json"
states=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(t["state"] for t in json.load(open(sys.argv[1]))["tasks"]))' "$T_TMP/show1.json")
check "four tasks succeeded, index 2 and 4 failed" test "$states" = "success success failure success failure success"
# "verdict class reason" of a run's latest attempt
verdict() { u status --json | /usr/bin/python3 -c "import json,sys
r=[x for x in json.load(sys.stdin)['runs'] if x['tag']==sys.argv[1]]
a=r[0]['attempts'][-1]; print(a['verdict'], a['class'], a['verdict_reason'])" "$1"; }
check "the exit 1 task is a program failure" grep -q '^failure program FAILED (ExitCode 1:0)' <<<"$(verdict "$tag2")"
check_oom "the task over its memory is OUT_OF_MEMORY" grep -q '^failure program OUT_OF_MEMORY' <<<"$(verdict "$tag4")"
check "each task wrote its own attempt log" sh -c "ls '$d'/runs/sw/*/slurm/attempt1.out | wc -l | grep -qx 6"
check "a task's log is its own run's" grep -q 'START case=0.3' "$d/runs/sw/CASE-0.3/slurm/attempt1.out"
check "best is the highest score of the sweep" sh -c "u() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' \"\$@\"; }; u status --json | grep -q '\"best\".*CASE-0.6'" 

# the sampler measured the OOM task; mem reports it and suggests more
u mem "$tag4" --json >"$T_TMP/mem.json" 2>"$T_TMP/mem.err"
check_oom "mem --json validates" sh -c "$V '$S/mem.schema.json' <'$T_TMP/mem.json'"
# the sampler sees the growth, not the last instant before the kill
nr=$(jget .peak_nonreclaimable_mb <"$T_TMP/mem.json" 2>/dev/null || echo 0)
check_oom "it saw the job's anon memory grow past 50M" test "$nr" -ge 50
sug=$(jget .suggested_mem <"$T_TMP/mem.json" 2>/dev/null || echo none)
check_oom "mem suggests more than the limit for an OOM job" sh -c "echo '$sug' | grep -Eq '^[0-9]+[MG]$' && [ \$(/usr/bin/python3 -c \"s='$sug'; print(int(s[:-1]) * (1024 if s[-1]=='G' else 1))\") -gt 200 ]"
check_oom "the briefing proposes a memory retry of the sweep" grep -q "xloop sweep retry $name --mem" "$T_TMP/briefings.txt"
u mem CASE-0.1 >"$T_TMP/mem-ok.txt" 2>&1
check_oom "mem on a success suggests a right-sized --mem" grep -q 'suggested --mem' "$T_TMP/mem-ok.txt"

# resubmit exactly the two failed indexes, with more memory
touch "$d/fixed"
u sweep retry "$name" --mem 900M --json >"$T_TMP/retry.json" 2>"$T_TMP/retry.err"
validates "sweep retry --json validates" sweep "$T_TMP/retry.json"
check "only indexes 2 and 4 are resubmitted" test "$(jget .array <"$T_TMP/retry.json")" = "2,4"
check "as their second attempts" test "$(jget .tasks.0.attempt <"$T_TMP/retry.json") $(jget .tasks.1.attempt <"$T_TMP/retry.json")" = "2 2"
arr2=$(jget .array_job_id <"$T_TMP/retry.json")
check "the new array is a new job" test "$arr2" != "$arr"
drive
step "sweep show --json" u sweep show "$name" --json >"$T_TMP/show2.json"
states=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(t["state"] for t in json.load(open(sys.argv[1]))["tasks"]))' "$T_TMP/show2.json")
check "every task has succeeded now" test "$states" = "success success success success success success"
check "the retried task logged to attempt2.out" test -s "$d/runs/sw/$tag4/slurm/attempt2.out"
u sweep retry "$name" >"$T_TMP/retry2.txt" 2>&1
check "a sweep that fully succeeded submits nothing" grep -q 'nothing submitted' "$T_TMP/retry2.txt"
expect_rc 66 "an unknown sweep is refused" u sweep retry nosuch
finish
