#!/usr/bin/env bash
# Segments on the real cluster: runs longer than their time limit continue
# from a checkpoint as jobs 1, 2, ... of one attempt, driven by tick alone.
# Exit 85 (fast): a run needing three segments succeeds once; one that does
# not touch its checkpoint stops at the guard; one past --segments fails;
# a program failure in segment 2 is the run's failure. The real signal
# (slow, once): the AGENTS.md snippet forwards it and the job continues; a
# job ignoring it ends TIMEOUT after one segment, and its continuation
# (held until a checkpoint is made) never starts. Runs submitted behind a
# segmented one start after its last segment; the GPU idles at most 1.5 s
# (median) between segments.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "segments" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
ROOT=${XLOOP_ROOT_DIR:?}
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" seg 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
MODE=plain
ck="$XLOOP_RUN_DIR/checkpoint"
done=$(cat "$ck" 2>/dev/null || echo 0)
echo "START mode=$MODE segment=${XLOOP_SEGMENT:-none} done=$done device=cpu"
case $MODE in
three)	done=$((done + 1)); echo "$done" >"$ck"; sleep 5
	[ "$done" -lt 3 ] && { echo "checkpointed $done"; exit 85; } ;;
nocheck) exit 85 ;;
always)	echo $((done + 1)) >"$ck"; sleep 5; exit 85 ;;
fail2)	[ "${XLOOP_SEGMENT:-1}" -ge 2 ] && { echo "Traceback: boom in segment 2"; exit 1; }
	echo 1 >"$ck"; sleep 5; exit 85 ;;
esac
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
for m in three nocheck always fail2; do
	step "new $m" u new "$m" --from base --set MODE=$m >/dev/null 2>&1
done

# the flag is checked against the time limit before anything is recorded
expect_rc 65 "a lead not shorter than --time is refused" u submit three --segments 3 --time 0:30
expect_rc 2 "a bad --segments is refused" u submit three --segments x
check "nothing was recorded" test -z "$(db 'SELECT id FROM attempt WHERE n > 0')"

# drive tick until none of our jobs is left; segments here last longer than one tick interval, as
# they do in real use (a continuation shorter than that can let the next
# run start first; the continuation then runs after it)
# (the real signal's first job runs beside them: each round ticks its study
# too and samples its status and briefing; only this study's jobs count)
drive() {
	local i
	for i in $(seq 1 "${1:-90}"); do
		u tick >>"$T_TMP/ticks.txt" 2>&1
		sig_round
		[ -z "$(live "$d")" ] && break
		sleep 1
	done
	echo "# drive: $i rounds, left: $(live "$d" | tr '\n' ' ')"
	# two ticks: a segment and its continuation that both ended between
	# two rounds take one tick each (the first one moves to the
	# continuation, the next judges it)
	u tick >>"$T_TMP/ticks.txt" 2>&1
	u tick >>"$T_TMP/ticks.txt" 2>&1
}
# the study in DIR's jobs in Slurm (their WorkDir is in it); a squeue that
# fails (a loaded controller) is not "none left"
live() {
	local q
	q=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z' 2>&1) || { echo "squeue failed: $q"; return; }
	printf '%s\n' "$q" | awk -v d="$1" '$2 == d || index($2, d "/") == 1'
}
jt() { as_user scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ts() { date -d "$1" +%s; }
verdict() { db "SELECT t.verdict || ':' || coalesce(t.verdict_reason, '') FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 1" "$1"; }
segs() { db "SELECT group_concat(k || ':' || state, ' ') FROM (SELECT s.k, s.state FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? ORDER BY s.k, s.try)" "$1"; }

# the real signal, in a second study whose jobs run side by side on the CPU:
# "keep" saves its progress on SIGUSR2 (through the AGENTS.md snippet) and
# works on until Slurm stops it (TIMEOUT), then continues; "deaf" ignores it
d2=$(user_dir)
u2() { as_user "$X" -C "$d2" "$@"; }
new_study "$d2" sig 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:01:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 4, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'
snippet() { sed -n '/^  ```bash$/,/^  ```$/p' "$1" | sed '1d;$d;s/^  //'; }
check "AGENTS.md from init and the project's hold the same snippet" \
	test "$(snippet "$d2/AGENTS.md")" = "$(snippet "$ROOT/AGENTS.md")"
check "the snippet is there" grep -q 'kill -USR2' <<<"$(snippet "$d2/AGENTS.md")"
cat >"$T_TMP/worker.sh" <<'W'
#!/bin/bash
ck="$XLOOP_RUN_DIR/checkpoint"
p=$(cat "$ck" 2>/dev/null || echo 0)
trap 'echo "$p" >"$ck"; echo "saved $p at the signal"; sig=1' USR2
# from segment 2 on, work once the test saw this segment in the briefing
# (a barrier: a segment that ran out between two samples showed nothing)
while [ "${XLOOP_SEGMENT:-1}" -ge 2 ] && [ ! -e "$XLOOP_RUN_DIR/briefed" ]; do sleep 0.2; done
while [ "$p" -lt 90 ]; do
	sleep 1; p=$((p + 1))
	[ -n "${sig:-}" ] && echo "$p" >"$ck"	# the end is near: save each step
done
echo '{"score": 0.6}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
W
{ printf '#!/bin/bash\necho "START segment=$XLOOP_SEGMENT device=cpu"\n'
  snippet "$d2/AGENTS.md" | sed 's|python train.py|"$XLOOP_ROOT/worker.sh"|'; } >"$T_TMP/keep.sh"
printf '#!/bin/bash\ntrap "" USR2\necho "START deaf device=cpu"\nsleep 200\n' >"$T_TMP/deaf.sh"
step "install -m 755 -o worker.sh" install -m 755 -o "$XLOOP_TEST_USER" "$T_TMP/worker.sh" "$d2/worker.sh"
step "chmod 644 keep.sh deaf.sh" chmod 644 "$T_TMP/keep.sh" "$T_TMP/deaf.sh"
step "adopt keep" u2 adopt "$T_TMP/keep.sh" --tag keep >/dev/null 2>&1
step "adopt deaf" u2 adopt "$T_TMP/deaf.sh" --tag deaf >/dev/null 2>&1
# one round of the second study: tick, its status and briefing sampled
# (each sample headed by its round, to compare a round's two); once the
# briefing showed segment 2 or later, the worker may go on (briefed)
sig_n=0
briefing_seg='^  keep attempt 1: job [0-9]+ [A-Z]+, segment [2-4] \(at most 4\), [0-9]+ min so far'
sig_round() {
	sig_n=$((sig_n + 1))
	u2 tick >>"$T_TMP/ticks2.txt" 2>&1
	echo "=== round $sig_n" >>"$T_TMP/status2.txt"
	u2 status keep >>"$T_TMP/status2.txt" 2>&1
	echo "=== round $sig_n (rc of next below)" >>"$T_TMP/next2.txt"
	u2 next >>"$T_TMP/next2.txt" 2>&1
	echo "=== rc $?" >>"$T_TMP/next2.txt"
	[ -e "$d2/runs/sig/keep/briefed" ] || ! grep -Eq "$briefing_seg" "$T_TMP/next2.txt" ||
		touch "$d2/runs/sig/keep/briefed"
}
# the job that checkpoints on the real signal takes two segments of a
# minute or so: it runs beside the exit-85 runs (one CPU each; it needs no
# GPU), the job that ignores the signal after them
expect_rc 0 "submit a job that checkpoints on the real signal" u2 submit keep --no-chain
t_sig=$(date +%s)

expect_rc 0 "submit a run that needs three segments" u submit three --segments 5
out=$(u submit nocheck --segments 5 2>&1)
check "the next run chains onto the queued segment 2" grep -q "after job $(db "SELECT job_id FROM segment WHERE k = 2 AND attempt_id = (SELECT max(id) FROM attempt WHERE n = 1 AND run_id = (SELECT id FROM run WHERE tag = 'three'))")" <<<"$out"
expect_rc 0 "submit one that exits 85 past --segments 2" u submit always --segments 2
expect_rc 0 "submit one that fails in segment 2" u submit fail2 --segments 4
drive 120

check "three segments make one success" grep -q '^success:' <<<"$(verdict three)"
check "its segments: two continued, the last one judged" test "$(segs three)" = "1:continued 2:continued 3:last 4:unneeded"
log=$d/runs/seg/three/slurm/attempt1.out
check "one log, a marked header per segment" test "$(grep -c '^==== xloop segment' "$log")" = 3
check "the job saw XLOOP_SEGMENT 1, 2, 3 in one directory" test "$(grep -o 'segment=[0-9]*' "$log" | tr '\n' ' ')" = "segment=1 segment=2 segment=3 "
check "one verdict for the attempt" test "$(db "SELECT count(*) FROM event e JOIN run r ON r.id = e.run_id WHERE r.tag = 'three' AND e.kind = 'verdict'")" = 1
# a continuation is the attempt's next job, not a requeue (the soak on many
# nodes, issue 34: "started again ... Slurm requeued it" in 11 of 18 logs)
check "no restart counted for its continuations" test "$(db "SELECT t.restarts FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'three' AND t.n = 1")" = 0
check "  and none marked in its log" test "$(grep -c '^xloop: job .* started again' "$log")" = 0
check "exit 85 without a new checkpoint stops at the guard" grep -q '^failure:no progress between segments' <<<"$(verdict nocheck)"
check "  after one segment" test "$(segs nocheck)" = "1:last 2:unneeded"
# a continuation starts only once a checkpoint was made (issue 27): the one
# queued behind a segment that saved nothing never ran (no node)
seg2() { db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = 2" "$1"; }
never_ran() {
	local j n
	j=$(seg2 "$1")
	n=$(jt "$j" NodeList)
	[ -n "$j" ] && [ "$(jt "$j" JobState)" = CANCELLED ] && { [ -z "$n" ] || [ "$n" = "(null)" ]; } ||
		{ echo "segment 2 of $1: job '$j' $(jt "$j" JobState) on '$n'"; return 1; }
}
check "  its continuation was cancelled before it could start" never_ran nocheck
check "passing --segments is a failure" grep -q "^failure:.*segments.max is 2" <<<"$(verdict always)"
check "  after two segments" test "$(segs always)" = "1:continued 2:last"
check "a program failure in segment 2 is the run's failure" grep -q '^failure:.*' <<<"$(verdict fail2)"
ev=$(db "SELECT verdict_reason || ' / ' || evidence FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'fail2' AND t.n = 1")
check "  with its log tail" sh -c 'printf "%s\n" "$1" | grep -q "boom in segment 2" || { echo "verdict / evidence: $1"; cat "$2"; exit 1; }' _ "$ev" "$d/runs/seg/fail2/slurm/attempt1.out"
check "  and no segment 3 ran" grep -qx "1:continued 2:last\( 3:unneeded\)\?" <<<"$(segs fail2)"
check "the breaker counts no exit 85 of a continued segment" test "$(db "SELECT count(*) FROM attempt WHERE verdict = 'failure'")" = 3
check "no queue_empty between segments" test "$(db "SELECT count(*) FROM outbox WHERE kind = 'queue_empty'")" -le 1

# each run started after the last segment of the one before it
order_ok=1
prev_end=
for m in three nocheck always fail2; do
	first=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.k = 1" "$m")
	last=$(db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.state = 'last'" "$m")
	st=$(ts "$(jt "$first" StartTime)")
	[ -n "$prev_end" ] && [ "$st" -lt "$prev_end" ] && order_ok=0
	prev_end=$(ts "$(jt "$last" EndTime)")
done
check "runs behind segmented runs start after their last segment" test "$order_ok" = 1

# the GPU's idle time between segments, from Slurm's times: each
# continuation was queued before the segment before it ended (SubmitTime,
# 1 s resolution), so the GPU never waits for a tick; the gap left is
# Slurm's start of a queued job (about a second; bounded at 3 s, which a
# continuation submitted at the next tick would pass as well)
gaps=
late=
while IFS='|' read -r a b; do
	end=$(ts "$(jt "$a" EndTime)")
	gaps="$gaps $(( $(ts "$(jt "$b" StartTime)") - end ))"
	[ "$(ts "$(jt "$b" SubmitTime)")" -le "$end" ] || late="$late $b"
done < <(db "SELECT p.job_id, n.job_id FROM segment p JOIN segment n ON n.attempt_id = p.attempt_id AND n.k = p.k + 1 WHERE p.state = 'continued' AND n.state IN ('current', 'continued', 'last')")
median=$(echo $gaps | tr ' ' '\n' | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
echo "# idle between segments (s):$gaps; median $median"
check "each continuation was queued before its segment ended${late:+ (late:$late)}" test -z "$late"
check "median idle between segments is at most 3 s" awk -v m="$median" 'BEGIN {exit !(m != "" && m <= 3)}'

expect_rc 0 "submit a job that ignores the signal" u2 submit deaf --no-chain
# the real signal: drive the second study's ticks until its jobs are gone
for i in $(seq 1 240); do
	sig_round
	[ -z "$(live "$d2")" ] && break
	sleep 1
done
u2 tick >>"$T_TMP/ticks2.txt" 2>&1
echo "# the real-signal part took $(( $(date +%s) - t_sig )) s"
v2() { d_save=$d; d=$d2; verdict "$1"; d=$d_save; }
s2() { d_save=$d; d=$d2; segs "$1"; d=$d_save; }
check "the signalled job continued after TIMEOUT and succeeded once" grep -q '^success:' <<<"$(v2 keep)"
check "  over several segments" grep -q '^1:continued 2:' <<<"$(s2 keep)"
check "  the signal reached the program" grep -q 'saved [0-9]* at the signal' "$d2/runs/sig/keep/slurm/attempt1.out"
check "  no restart counted for its segments" sh -c '! grep -q "^xloop: job .* started again" "$1"' _ "$d2/runs/sig/keep/slurm/attempt1.out"
# (segment 2 or a later one: the first study's part may outlast segment 2)
check "status shows the segment and the time so far" grep -Eq '^    segment [2-4] \(at most 4\), [0-9]+ min so far$' "$T_TMP/status2.txt"
# the briefing of a round whose status showed it (on failure: those rounds' briefings)
seg_rounds=$(awk '/^=== round/ { r = $3 } /^    segment [2-4] \(at most 4\), [0-9]+ min so far$/ { print r }' "$T_TMP/status2.txt" | sort -un | tr '\n' ' ')
briefed() {
	grep -Eq "$briefing_seg" "$T_TMP/next2.txt" && return
	echo "# status showed segment 2-4 in rounds: $seg_rounds; the briefings of the first two:"
	for r in $(echo $seg_rounds | cut -d' ' -f1-2); do
		awk -v r="$r" '/^=== round/ { on = ($3 == r) } /^=== rc/ && on { print; on = 0 } on' "$T_TMP/next2.txt"
	done
	return 1
}
check "the briefing too" briefed
check "the attempt spans its segments (one bar in the report)" test "$(d_save=$d; d=$d2; db "SELECT t.started_at = (SELECT min(started_at) FROM segment WHERE attempt_id = t.id) FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'keep' AND t.n = 1"; d=$d_save)" = 1
check "the job that ignores the signal is one TIMEOUT failure" grep -q '^failure:.*TIMEOUT' <<<"$(v2 deaf)"
check "  after one segment" test "$(s2 deaf)" = "1:last 2:unneeded"
d_save=$d; d=$d2
check "  its continuation never started (sacct's last job is no COMPLETED one)" never_ran deaf
d=$d_save

finish
