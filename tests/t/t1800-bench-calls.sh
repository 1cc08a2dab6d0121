#!/usr/bin/env bash
# The Slurm load of a poll must not grow with the number of jobs (issue 11,
# bench/calls.sh): with 5 and then 40 live xloop jobs (a long job holding the
# GPU, sweeps chained behind it, nothing finishing), one `xloop tick` runs
# the same small number of Slurm commands, at most 3, counted by a PATH shim
# (bench/shim.sh) put in front of that one process only.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "Slurm calls per tick" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" calls 'c["resources"].update(cpus=1, mem="100M", time="00:10:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=1
echo "START x=$X device=cpu"
sleep "$SLEEP"
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a run to hold the GPU" u new hold --from base --set SLEEP=600
expect_rc 0 "submit it" u submit hold --no-chain
for _ in $(seq 1 30); do
	u status hold --json 2>/dev/null | grep -q '"state": "RUNNING"' && break
	sleep 1
done
live() { as_user squeue -h -r -u "$XLOOP_TEST_USER" -o %i | grep -c .; }

shim=$T_TMP/shim
log=$T_TMP/calls.log
sh "$XLOOP_ROOT_DIR/bench/shim.sh" "$shim" "$log"
# one tick takes new jobs in; the next one is counted
counted_tick() {
	u tick >/dev/null 2>&1
	: >"$log"
	as_user env PATH="$shim:$PATH" "$X" -C "$d" tick >/dev/null 2>&1
	grep -c . "$log"
}

expect_rc 0 "a sweep of 4 behind it" u sweep --set X=1,2,3,4
check "5 live jobs" test "$(live)" = 5
n5=$(counted_tick)
step "cp calls5.log" cp "$log" "$T_TMP/calls5.log"
check "a tick with 5 live jobs ran Slurm through the shim ($n5 commands)" test "$n5" -ge 1
check "at most 3 with nothing finished" sh -c "[ $n5 -le 3 ] || { cat '$T_TMP/calls5.log'; exit 1; }"
check "squeue among them" grep -q '^squeue ' "$T_TMP/calls5.log"
check "tick.log counts the same" sh -c "tail -n1 '$d/.xloop/tick.log' | grep -q 'slurm_calls=$n5;'"

expect_rc 0 "a sweep of 35 more" u sweep --set X=$(seq -s, 5 39)
check "40 live jobs" test "$(live)" = 40
n40=$(counted_tick)
check "a tick with 40 live jobs ran as many Slurm commands as with 5 ($n40 vs $n5)" \
	sh -c "[ '$n40' = '$n5' ] || { cat '$log'; exit 1; }"
check "still at most 3" test "$n40" -le 3
u cancel hold >/dev/null 2>&1
finish
