#!/usr/bin/env bash
# A job id Slurm handed out twice (found by the soak, issue 21): after
# slurmctld is killed, the jobs it accepted since its last state save are
# gone and their ids go to new jobs. The attempt whose job vanished must
# become "lost" (infra, retried), never take the verdict of the job that
# now carries its id (another run's, a feeder: "COMPLETED 0:0 but no
# cv.json"). Here the vanished job is cancelled and the attempt's job id
# set to a finished job of the same user with another comment.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
U=$XLOOP_TEST_USER
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
db() { sql --rw --user "$d/.xloop/state.db" "$@"; }

new_study "$d" reuse 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
V=0
echo "START v=$V device=cpu"
sleep 1
echo "{\"score\": $V}" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt job.sh --tag base --cv" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
step "new v1 --from base --set" u new v1 --from base --set V=1 >/dev/null

# v1's job waits behind a blocker, so it never runs
blocker=$(as_user sbatch --parsable -p gpu -t 2 --mem 50M -J blocker -o /dev/null --wrap 'sleep 100')
expect_rc 0 "submit v1 behind a blocker" u submit v1 --after "$blocker"
job=$(db "SELECT job_id FROM attempt WHERE n = 1")
# another job of the user, finished COMPLETED 0:0, with a comment of its own
other=$(as_user sbatch --parsable -p gpu -t 1 --mem 50M -J other --comment "someone-else" -o /dev/null --wrap true)
for i in $(seq 1 60); do
	as_user scontrol show job -o "$other" 2>/dev/null | grep -q 'JobState=COMPLETED' && break
	sleep 1
done
# the controller forgot v1's job; its id is the other job's now
as_user scancel "$job"
db "UPDATE attempt SET job_id = ? WHERE n = 1" "$other" >/dev/null
u tick >"$T_TMP/tick.txt" 2>&1
check "the other job's end is not v1's verdict" \
	test -z "$(db "SELECT verdict FROM attempt WHERE n = 1")"
check "v1's job counts as missing (lost after two polls a minute apart)" \
	test -n "$(db "SELECT missing_since FROM attempt WHERE n = 1")"
# a minute later: lost, infra, and retried as attempt 2
db "UPDATE attempt SET missing_since = missing_since - 120 WHERE n = 1" >/dev/null
u tick >>"$T_TMP/tick.txt" 2>&1
check "then v1 attempt 1 is lost (infra)" \
	test "$(db "SELECT verdict || ' ' || failure_class FROM attempt WHERE n = 1")" = "failure infra"
check "and v1 is retried as attempt 2" \
	test -n "$(db "SELECT job_id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'v1' AND n = 2")"
as_user scancel "$blocker" 2>/dev/null
finish
