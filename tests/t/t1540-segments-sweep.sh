#!/usr/bin/env bash
# Segmented sweeps continue task by task: each array task is segment 1 of
# its run's attempt; a task that exits 85 continues as a plain job of its
# own (afternotok on that task) in the same directory and log; each task
# gets one strict verdict from its last segment. xloop is killed right
# after the array's sbatch and right after a continuation's sbatch: after
# recovery, one Slurm job per (attempt, segment, try). A run queued behind
# the sweep starts after the last segment of every task. The breaker and
# the notifications count verdicts, never an exit 85 or the moment between
# two segments. Uses the test build (crash points).
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "segmented sweep" "run once, without accounting"
	finish
	exit
fi

X=${XLOOP_ASAN_BIN:?}
d=$(user_dir)
u() { as_user env XLOOP_TEST_ORPHAN_SECS=0 "$X" -C "$d" "$@"; }
crash() { local at=$1; shift; as_user env XLOOP_CRASH_AT="$at" "$X" -C "$d" "$@"; }

# one GPU: the tasks and their continuations take turns; breaker.program 2
# would open on two failures in a row, so an exit 85 counted as one shows
new_study "$d" sw 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 2, "no_gpu": False}'

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
MODE=base
ck="$XLOOP_RUN_DIR/checkpoint"
done=$(cat "$ck" 2>/dev/null || echo 0)
echo "START mode=$MODE segment=${XLOOP_SEGMENT:-none} done=$done device=cpu"
case $MODE in
three)	done=$((done + 1)); echo "$done" >"$ck"; sleep 4
	[ "$done" -lt 3 ] && { echo "checkpointed $done"; exit 85; } ;;
two)	done=$((done + 1)); echo "$done" >"$ck"; sleep 4
	[ "$done" -lt 2 ] && { echo "checkpointed $done"; exit 85; } ;;
nocheck) sleep 2; exit 85 ;;
*)	sleep 3 ;;
esac
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 2 "new --segments wants a number" u new bad --from base --set MODE=bad --segments x
check "  and made nothing" test "$(db "SELECT count(*) FROM run WHERE tag = 'bad'")" = 0
# the run queued behind the sweep has its own segment count
expect_rc 0 "new --segments N" u new after --from base --set MODE=after --segments 2
check "  is recorded on the run" test "$(db "SELECT segments FROM run WHERE tag = 'after'")" = 2
check "  and in its commit" grep -q '^Segments: up to 2' <<<"$(as_user git -C "$d" log -1 --format=%B -- runs/sw/after/job.sh)"

expect_rc 2 "a bad --segments is refused" u sweep --set MODE=x,y --segments x
expect_rc 65 "a lead not shorter than --time is refused" u sweep --set MODE=x,y --segments 3 --time 0:30
check "  before any run was made" test "$(db "SELECT count(*) FROM run")" = 2

# the array's sbatch answered, xloop died before recording it
expect_rc 137 "killed right after the sweep's sbatch" \
	crash sweep-after-sbatch sweep --set MODE=three,one,nocheck,two --name s --segments 4 --from base
check "  one segment row per task, no job recorded yet" \
	test "$(db "SELECT count(*) || ':' || count(job_id) FROM segment WHERE k = 1")" = "4:0"
check "  each task has its segments wrapper" test "$(ls "$d/.xloop/segments" | wc -l)" = 4
u tick >>"$T_TMP/ticks.txt" 2>&1
check "  tick found the tasks by their token" \
	test "$(db "SELECT count(*) FROM segment WHERE k = 1 AND job_id LIKE '%\_%' ESCAPE '\'")" = 4
arr=$(db "SELECT substr(job_id, 1, instr(job_id, '_') - 1) FROM segment WHERE k = 1 LIMIT 1")
out=$(u submit after 2>&1)
check "a run queued behind the sweep waits for its array" grep -q "after job $arr\b" <<<"$out"

# drive tick; the first tick that queues a continuation dies right after
# its sbatch
crashed=0
for i in $(seq 1 150); do
	# until one was killed, every tick carries the crash point: a plain tick
	# could queue the continuation first (a job that started between the
	# look and the tick), and the kill would never happen
	if [ "$crashed" = 0 ]; then
		crash segment-after-sbatch tick >>"$T_TMP/ticks.txt" 2>&1
		[ $? = 137 ] && crashed=1
	else
		u tick >>"$T_TMP/ticks.txt" 2>&1
	fi
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u tick >>"$T_TMP/ticks.txt" 2>&1
check "a tick was killed right after a continuation's sbatch" test "$crashed" = 1

verdict() { db "SELECT t.verdict || ':' || coalesce(t.verdict_reason, '') FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 1" "$1"; }
segs() { db "SELECT group_concat(k || ':' || state, ' ') FROM (SELECT s.k, s.state FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.state != 'submit_failed' ORDER BY s.k, s.try)" "$1"; }
tag() { db "SELECT r.tag FROM sweep_task k JOIN sweep w ON w.id = k.sweep_id JOIN run r ON r.id = k.run_id WHERE w.name = 's' AND k.idx = ?" "$1"; }
# jobs Slurm has (live or finished) for segment K of a run's attempt 1
seg_jobs() { as_user scontrol show job -o 2>/dev/null | grep -F "WorkDir=$d " | grep -c "Comment=xloop:sw/$1#1\.$2:"; }

three=$(tag 0) one=$(tag 1) nocheck=$(tag 2) two=$(tag 3)
check "the task needing three segments succeeds once" grep -q '^success:' <<<"$(verdict "$three")"
check "  two continued, the third judged" grep -q '^1:continued 2:continued 3:last' <<<"$(segs "$three")"
check "  one log, a marked header per segment" \
	test "$(grep -c '^==== xloop segment' "$d/runs/sw/$three/slurm/attempt1.out")" = 3
check "  the job saw XLOOP_SEGMENT 1, 2, 3" \
	test "$(grep -o 'segment=[0-9]*' "$d/runs/sw/$three/slurm/attempt1.out" | tr '\n' ' ')" = "segment=1 segment=2 segment=3 "
check "  its continuations were plain jobs" \
	test "$(db "SELECT count(*) FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k > 1 AND s.state IN ('continued', 'last') AND s.job_id NOT LIKE '%\_%' ESCAPE '\'" "$three")" = 2
check "the task needing one segment succeeds" grep -q '^success:' <<<"$(verdict "$one")"
check "  its continuation never ran" grep -q '^1:last\( 2:unneeded\)\?$' <<<"$(segs "$one")"
check "the task needing two succeeds" grep -q '^success:' <<<"$(verdict "$two")"
check "  over two segments" grep -q '^1:continued 2:last' <<<"$(segs "$two")"
check "exit 85 without a new checkpoint stops at the guard" \
	grep -q '^failure:no progress between segments' <<<"$(verdict "$nocheck")"
check "one verdict per task" test "$(db "SELECT count(*) FROM event e JOIN sweep_task k ON k.run_id = e.run_id WHERE e.kind = 'verdict'")" = 4
for t in "$three" "$one" "$nocheck" "$two"; do
	for k in 2 3; do
		# every try is an intent row before its sbatch; the job id is
		# recorded after it (the crash above may cut that off, and Slurm may
		# end the held job, kill-on-invalid-dep, before a tick finds it by
		# its token): no more jobs than intents, every recorded one Slurm's
		tries=$(db "SELECT count(*) FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = ? AND s.job_id IS NOT NULL" "$t" "$k")
		intents=$(db "SELECT count(*) FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = ? AND s.state != 'submit_failed'" "$t" "$k")
		seen=$(seg_jobs "$t" "$k")
		check "$t segment $k: at most one Slurm job per try, every recorded one Slurm's (Slurm $seen, tries $intents, recorded $tries)" \
			test "$tries" -le "$seen" -a "$seen" -le "$intents"
	done
done
check "no try was recorded twice" test "$(db "SELECT count(*) FROM (SELECT attempt_id, k, try FROM segment GROUP BY 1, 2, 3 HAVING count(*) > 1)")" = 0
check "the run behind the sweep succeeded" grep -q '^success:' <<<"$(verdict after)"
check "  submitted with its own --segments, recorded like a flag" \
	test "$(db "SELECT t.overrides || ':' || (SELECT max(s.max) FROM segment s WHERE s.attempt_id = t.id) FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'after'")" = "--segments=2:2"

# the run queued behind the sweep started after every task's last segment
# (scontrol asked again when a loaded controller does not answer: an empty
# time would read as midnight; each time is printed when the check fails)
jt() {
	local i v
	for i in 1 2 3 4 5; do
		v=$(as_user scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p")
		[ -n "$v" ] && { echo "$v"; return; }
	done
}
ts() { [ -n "$1" ] && date -d "$1" +%s; }
after_job=$(db "SELECT t.job_id FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'after'")
after_start=$(ts "$(jt "$after_job" StartTime)")
late= ends=
while read -r j; do
	e=$(ts "$(jt "$j" EndTime)")
	ends="$ends $j:${e:-?}"
	{ [ -z "$e" ] || [ -z "$after_start" ] || [ "$e" -gt "$after_start" ]; } && late="$late $j"
done < <(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN sweep_task k ON k.run_id = t.run_id WHERE s.state IN ('continued', 'last')")
check "the run behind the sweep started after the last segment of every task" \
	sh -c '[ -z "$1" ] || { echo "after: job $2 started ${3:-?}; segments (job:end):$4; late or unknown:$1"; exit 1; }' _ "$late" "$after_job" "$after_start" "$ends"

# the breaker and the notifications count verdicts only
check "the breaker did not open (one failure, five exit 85s)" \
	test "$(db "SELECT count(*) FROM event WHERE kind = 'breaker-open'")" = 0
check "one notification per verdict, none per segment" \
	test "$(db "SELECT count(*) FROM outbox o JOIN run r ON r.tag = o.tag JOIN sweep_task k ON k.run_id = r.id WHERE o.kind IN ('job_ended', 'failure', 'new_best')")" = 4
check "the queue emptied once" test "$(db "SELECT count(*) FROM outbox WHERE kind = 'queue_empty'")" = 1
out=$(u sweep show s 2>&1)
check "sweep show: each task's verdict" test "$(grep -c 'success' <<<"$out")" = 3

# sweep retry resubmits the failed task, which keeps its --segments
expect_rc 0 "sweep retry" u sweep retry s
check "  the failed task as attempt 2, with --segments 4" \
	test "$(db "SELECT t.overrides || ':' || s.max FROM attempt t JOIN run r ON r.id = t.run_id JOIN segment s ON s.attempt_id = t.id WHERE r.tag = ? AND t.n = 2 AND s.k = 1" "$nocheck")" = "--segments=4:4"
for i in $(seq 1 60); do
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u tick >>"$T_TMP/ticks.txt" 2>&1
check "  and stops at the guard again" grep -q '^failure:no progress' <<<"$(db "SELECT t.verdict || ':' || t.verdict_reason FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 2" "$nocheck")"

finish
