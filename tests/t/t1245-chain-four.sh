#!/usr/bin/env bash
# A line of four (issue 27): q1 runs, q2 <- q3 <- q4 wait behind it.
# resume names, for each queued job, the job it waits for (q3 waits for
# q2's job, not its own), as `why` does; `prioritize q4` makes the line
# q1 <- q4 <- q2 <- q3 in Slurm (scontrol's Dependency), as help promises.
. "$(dirname "$0")/lib.sh"

# run once, in the plain profile: the line is squeue and scontrol update, the same with accounting
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "a line of four" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" ch4 'c["resources"].update(cpus=1, mem="200M", time="00:10:00")
c["queue"]["depth"] = 0
c["driver"]["mode"] = "cron"'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
SLEEP=1
echo "START sleep=$SLEEP"
sleep "$SLEEP"
python3 -c "import json; json.dump({'score': 0.5}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
step "q1 (long)" u new q1 --from base --set SLEEP=300
for q in q2 q3 q4; do step "$q" u new "$q" --from base --set SLEEP=${q#q}; done
for q in q1 q2 q3 q4; do step "submit $q" u submit "$q"; done
job() { db "SELECT a.job_id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = '$1' ORDER BY a.id DESC LIMIT 1"; }
j1=$(job q1) j2=$(job q2) j3=$(job q3) j4=$(job q4)
dep() { as_user scontrol show job -o "$1" | grep -o 'Dependency=[^ ]*' | sed 's/(.*//'; }
check "Slurm chains q1 <- q2 <- q3 <- q4" test "$(dep "$j2") $(dep "$j3") $(dep "$j4")" = "Dependency=afterany:$j1 Dependency=afterany:$j2 Dependency=afterany:$j3"
for i in $(seq 1 30); do as_user squeue -h -j "$j1" -o %T | grep -q RUNNING && break; sleep 1; done

# --- resume: what each queued job waits for
u resume >"$T_TMP/r.txt" 2>&1
w() { grep -A1 "^  $1 attempt 1: job" "$T_TMP/r.txt" | sed -n 2p; }
check "resume: q2 waits for q1's job" sh -c "echo '$(w q2)' | grep -q 'waits for job $j1 (q1) to end' || { cat '$T_TMP/r.txt'; exit 1; }"
check "resume: q3 waits for q2's job, not its own" sh -c "echo '$(w q3)' | grep -q 'waits for job $j2 (q2) to end' || { cat '$T_TMP/r.txt'; exit 1; }"
check "resume: q4 waits for q3's job" sh -c "echo '$(w q4)' | grep -q 'waits for job $j3 (q3) to end'"
u why q3 >"$T_TMP/why.txt" 2>&1
check "why q3 says the same" grep -q "waits for job $j2 (q2, pending)" "$T_TMP/why.txt"

# --- prioritize the last of the line
u prioritize q4 >"$T_TMP/p.txt" 2>&1
check "prioritize q4 exits 0" test $? = 0
check "Slurm has q1 <- q4 <- q2 <- q3 now" sh -c "test '$(dep "$j4") $(dep "$j2") $(dep "$j3")' = 'Dependency=afterany:$j1 Dependency=afterany:$j4 Dependency=afterany:$j2' || { cat '$T_TMP/p.txt'; as_user scontrol show job -o $j2 $j3 $j4 | grep -o 'JobId=[0-9]*\|Dependency=[^ ]*'; exit 1; }"
check "nothing is left held" sh -c "! runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' scontrol show job -o $j2 $j3 $j4 | grep -Eq 'Priority=0 |JobHeldUser'"
check "the attempts record it" test "$(db "SELECT r.tag || ':' || a.after_job FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag IN ('q2', 'q3', 'q4') ORDER BY r.tag")" = "$(printf 'q2:%s\nq3:%s\nq4:%s' "$j4" "$j2" "$j1")"
u resume >"$T_TMP/r.txt" 2>&1
check "resume follows the new line (q2 waits for q4)" sh -c "echo '$(w q2)' | grep -q 'waits for job $j4 (q4) to end' || { cat '$T_TMP/r.txt'; exit 1; }"
finish
