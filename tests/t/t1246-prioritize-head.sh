#!/usr/bin/env bash
# prioritize when nothing of the study runs yet (issue 35): q1 pending (the
# node busy with another job of the user's), q2 <- q3 <- q4 chained behind
# it. `prioritize q4` must leave exactly one of them eligible, q4, and the
# line q4 <- q1 <- q2 <- q3; when the node frees, q4 starts first. Order
# comes from a blocker job that waits for a file the test writes. When
# Slurm refuses one of the moves, prioritize puts the line back as it was
# (it used to leave it half moved: two jobs free to start, Slurm choosing).
. "$(dirname "$0")/lib.sh"

# run once, in the plain profile: the line is squeue and scontrol update, the same with accounting
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "prioritize with nothing running" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" ph 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="")
c["queue"]["depth"] = 0
c["driver"]["mode"] = "cron"'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
SLEEP=1
echo "START sleep=$SLEEP device=cpu"
sleep "$SLEEP"
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
for q in q1 q2 q3 q4; do step "$q" u new "$q" --from base --set SLEEP=$((${q#q} + 1)); done

# the blocker: every CPU of the node, until the test writes $go
ncpu=$(sinfo -h -N -p "$(as_user python3 -c "import json; print(json.load(open('$d/xloop.json'))['slurm']['partition'])")" -o %c | sort -n | tail -n1)
go=$d/go
blk=$(as_user sbatch --parsable -J blocker -c "$ncpu" --mem=50M -t 5 -o /dev/null \
	--wrap "while [ ! -e '$go' ]; do sleep 0.2; done")
check "the blocker was submitted ($blk)" test -n "$blk"
for i in $(seq 1 60); do as_user squeue -h -j "$blk" -o %T | grep -q RUNNING && break; sleep 0.5; done
check "the blocker runs" test "$(as_user squeue -h -j "$blk" -o %T)" = RUNNING

for q in q1 q2 q3 q4; do step "submit $q" u submit "$q"; done
job() { db "SELECT a.job_id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = '$1' ORDER BY a.id DESC LIMIT 1"; }
j1=$(job q1) j2=$(job q2) j3=$(job q3) j4=$(job q4)
dep() { as_user scontrol show job -o "$1" | grep -o 'Dependency=[^ ]*' | sed 's/(.*//'; }
check "q1 pends with nothing to wait for" test "$(dep "$j1")" = "Dependency="
check "Slurm chains q1 <- q2 <- q3 <- q4" test "$(dep "$j2") $(dep "$j3") $(dep "$j4")" = "Dependency=afterany:$j1 Dependency=afterany:$j2 Dependency=afterany:$j3"

u prioritize q4 >"$T_TMP/p.txt" 2>&1
check "prioritize q4 exits 0" sh -c "test $? = 0 || { cat '$T_TMP/p.txt'; exit 1; }"
show() { for j in "$j1" "$j2" "$j3" "$j4"; do as_user scontrol show job -o "$j"; done | grep -o 'JobId=[0-9]*\|Dependency=[^ ]*\|JobState=[A-Z]*\|Priority=[0-9]*\|Reason=[^ ]*' | paste -sd' '; }
free_jobs=$(for j in $j1 $j2 $j3 $j4; do [ "$(dep "$j")" = "Dependency=" ] && echo "$j"; done | paste -sd' ')
check "exactly one job is eligible, q4 ($free_jobs)" sh -c "test '$free_jobs' = '$j4' || { cat '$T_TMP/p.txt'; echo '$(show)'; exit 1; }"
check "the line is q4 <- q1 <- q2 <- q3" sh -c "test '$(dep "$j1") $(dep "$j2") $(dep "$j3")' = 'Dependency=afterany:$j4 Dependency=afterany:$j1 Dependency=afterany:$j2' || { echo '$(show)'; exit 1; }"
check "nothing is left held" sh -c "! echo '$(show)' | grep -Eq 'Priority=0 |JobHeldUser'"
check "the attempts record it" test "$(db "SELECT r.tag || ':' || coalesce(a.after_job, '') FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag IN ('q1', 'q2', 'q3', 'q4') ORDER BY r.tag")" = "$(printf 'q1:%s\nq2:%s\nq3:%s\nq4:' "$j4" "$j1" "$j2")"

# Slurm refuses one of the updates (a scontrol on PATH fails the one that
# moves q4 behind q3): prioritize q3 fails and puts the line back as it
# was, never half moved with two jobs free to start
step "mkdir -p fakebin" mkdir -p "$T_TMP/fakebin"
cat >"$T_TMP/fakebin/scontrol" <<FAKE
#!/bin/bash
if [ "\$1 \$2 \$3" = "update jobid=$j4 Dependency=afterany:$j3" ]; then
	echo "Job dependency problem" >&2
	exit 1
fi
exec /usr/bin/scontrol "\$@"
FAKE
step "chmod 755 fakebin scontrol" chmod 755 "$T_TMP/fakebin" "$T_TMP/fakebin/scontrol"
as_user env PATH="$T_TMP/fakebin:$PATH" "$X" -C "$d" prioritize q3 >"$T_TMP/p3.txt" 2>&1
rc=$?
check "prioritize q3 fails when Slurm refuses a move ($rc)" sh -c "test $rc != 0 && grep -q 'back as it was' '$T_TMP/p3.txt' || { cat '$T_TMP/p3.txt'; exit 1; }"
free_jobs=$(for j in $j1 $j2 $j3 $j4; do [ "$(dep "$j")" = "Dependency=" ] && echo "$j"; done | paste -sd' ')
check "still exactly one job is eligible, q4 ($free_jobs)" sh -c "test '$free_jobs' = '$j4' || { cat '$T_TMP/p3.txt'; echo '$(show)'; exit 1; }"
check "and the line is as it was: q4 <- q1 <- q2 <- q3" sh -c "test '$(dep "$j1") $(dep "$j2") $(dep "$j3")' = 'Dependency=afterany:$j4 Dependency=afterany:$j1 Dependency=afterany:$j2' || { echo '$(show)'; exit 1; }"
check "nothing is left held after the failure" sh -c "! echo '$(show)' | grep -Eq 'Priority=0 |JobHeldUser'"

# the node frees: q4 starts, and q1 only after it
start() { as_user scontrol show job -o "$1" | grep -o 'StartTime=[^ ]*' | cut -d= -f2; }
step "release the blocker" as_user touch "$go"
for i in $(seq 1 240); do
	st1=$(as_user scontrol show job -o "$j1" | grep -o 'JobState=[A-Z]*')
	[ "$st1" != JobState=PENDING ] && break
	sleep 0.5
done
s1=$(start "$j1") s4=$(start "$j4")
check "q4 starts before q1 ($s4, $s1)" sh -c "case '$s4' in 20*) ;; *) exit 1 ;; esac; [ '$s4' '<' '$s1' ]"
step "scancel the rest" as_user scancel "$j1" "$j2" "$j3" "$j4"
finish
