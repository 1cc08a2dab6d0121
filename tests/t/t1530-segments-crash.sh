#!/usr/bin/env bash
# Crash safety of segments: xloop killed with SIGKILL at each step of
# queuing a segment (after its intent, after its sbatch, after recording
# it), at submission and at a continuation in tick. After recovery: one
# Slurm job per (attempt, segment, try), and each run one success.
# The crash points exist only in the test build (build/asan/xloop).
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "segment crashes" "run once, without accounting"
	finish
	exit
fi

X=${XLOOP_ASAN_BIN:?}
d=$(user_dir)
u() { as_user env XLOOP_TEST_ORPHAN_SECS=0 "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }

new_study "$d" cr 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 3, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'
# two segments: the first works SLEEP seconds and asks to continue
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
SLEEP=6
ck="$XLOOP_RUN_DIR/checkpoint"
echo "START segment=$XLOOP_SEGMENT device=cpu"
if [ ! -e "$ck" ]; then sleep "$SLEEP"; echo 1 >"$ck"; exit 85; fi
#GATE
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"
# the last segment waits at a gate: s9's until its tick has been killed
step "gate job.sh" gate_job "$T_TMP/job.sh"
for r in s5 s7 s8; do open_gate "$r"; done
printf '{"score": 0}\n' >"$T_TMP/cv.json"
step "adopt job.sh --tag base --cv" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json" >/dev/null
for v in 4 5 7 8 9; do u new "s$v" --from base --set "SLEEP=$v" >/dev/null; done

# jobs Slurm has (live or finished) for segment K of a run's attempt 1
seg_jobs() { as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c "Comment=xloop:cr/$1#1\.$2:"; }
# attempt 1 of run $1 succeeded (else: what status says of it, and the ticks)
one_success() {
	local v
	v=$(db "SELECT t.verdict FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 1" "$1")
	if [ "$v" = success ]; then ok "$1: one success"; return; fi
	not_ok "$1: one success" "verdict '$v'
$(u status "$1" 2>&1 | tail -n 25)
$(tail -n 10 "$T_TMP/ticks.txt")"
}
drive() {
	local i
	for i in $(seq 1 120); do
		u tick >>"$T_TMP/ticks.txt" 2>&1
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
		sleep 1
	done
	# a segment and its continuation may both have ended since the last
	# tick: one tick moves to the continuation, the next judges it
	u tick >>"$T_TMP/ticks.txt" 2>&1
	u tick >>"$T_TMP/ticks.txt" 2>&1
}

expect_rc 137 "killed after segment 2's intent" crash segment-after-intent submit s5 --no-chain
check "  its intent is there, without a job" test "$(db "SELECT state || ':' || coalesce(job_id, '') FROM segment WHERE k = 2")" = "submitting:"
u tick >/dev/null 2>&1
check "  tick queued it once (a new try)" test "$(seg_jobs s5 2)" = 1
check "  the lost try is marked" test "$(db "SELECT group_concat(try || ':' || state, ' ') FROM segment WHERE k = 2")" = "1:submit_failed 2:queued"

expect_rc 137 "killed right after segment 2's sbatch" crash segment-after-sbatch submit s7 --no-chain
u tick >/dev/null 2>&1
check "  tick adopted it by its token, no second job" test "$(seg_jobs s7 2)" = 1
check "  recorded with its job" test -n "$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 's7' AND s.k = 2 AND s.state = 'queued'")"

expect_rc 137 "killed after recording segment 2" crash segment-after-record submit s8 --no-chain
u tick >/dev/null 2>&1
check "  no second job" test "$(seg_jobs s8 2)" = 1

drive
for r in s5 s7 s8; do
	one_success "$r"
	check "$r: one job per segment" test "$(seg_jobs "$r" 2)" = 1
done

# at a continuation (alone in the queue): segment 2 becomes current in
# tick, segment 3 is queued (held) and the tick killed before recording it
seg_running() {	# TAG: segment 2 of its attempt 1 runs
	[ "$(as_user squeue -h -j "$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = 2" "$1")" -o %T 2>/dev/null)" = RUNNING ]
}
seg3_rows() { db "SELECT count(*) FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = 3" "$1"; }
crash_at_continuation() {	# TAG
	expect_rc 0 "$1: a run for the continuation" u submit "$1" --no-chain
	check "  its segment 2 runs, held at the gate" wait_for 240 eval "at_gate $1 && seg_running $1"
	crash segment-after-sbatch tick >/dev/null 2>&1
	rc=$?
	check "  killed at a continuation's sbatch in tick" test "$rc" = 137
}
crash_at_continuation s9
# the recovery tick while segment 2 still runs (held at its gate)
u tick >/dev/null 2>&1
open_gate s9
check "  segment 3 has one job" test "$(seg_jobs s9 3)" -le 1
check "  and one row" test "$(seg3_rows s9)" = 1

# the same, but segment 3's job ends before the recovery tick (as when
# segment 2's wrapper cancels it): squeue no longer shows it, scontrol
# does; no second segment 3 is queued
crash_at_continuation s4
j3=$(as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep "Comment=xloop:cr/s4#1\.3:" | sed -n 's/^JobId=\([0-9]*\) .*/\1/p')
step "  its segment 3 job ($j3) cancelled before the recovery tick" as_user scancel "$j3"
check "  and out of squeue" wait_for 60 eval "[ -z \"\$(as_user squeue -h -j $j3 -o %i 2>/dev/null)\" ]"
u tick >/dev/null 2>&1
open_gate s4
check "  segment 3 has one job" test "$(seg_jobs s4 3)" = 1
check "  and one row, adopted with that job" test "$(db "SELECT count(*) || ':' || group_concat(coalesce(s.job_id, '')) FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 's4' AND s.k = 3")" = "1:$j3"

drive
for r in s9 s4; do
	one_success "$r"
	check "$r: one job per segment" test "$(seg_jobs "$r" 2)" = 1
done

finish
