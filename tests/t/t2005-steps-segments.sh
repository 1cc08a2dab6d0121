#!/usr/bin/env bash
# Steps over segments (issue 28) on the real cluster: a training that
# continues over three segments (exit 85 after each checkpoint) and an
# evaluation step. The evaluation waits afterok on the current segment or
# its queued continuation (Slurm's '?'), kept up to date by reconcile, so it
# starts once, after the last segment, with ticks every second; when no
# tick ran while the segments went on, Slurm drops it and reconcile submits
# it again behind the last segment. A training failing in segment 2 drops
# the evaluation ("not run"). One verdict each; no job left.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "steps over segments" "run once, without accounting"
	finish
	exit
fi

X=${XLOOP_ASAN_BIN:-$XLOOP_BIN}
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
jt() { as_user scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
ts() { date -d "$1" +%s; }
verdict() { db "SELECT t.verdict || ':' || coalesce(t.verdict_reason, '') FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = 1" "$1"; }
segs() { db "SELECT group_concat(k || ':' || state, ' ') FROM (SELECT s.k, s.state FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? ORDER BY s.k, s.try)" "$1"; }
evals() { db "SELECT s.try || ':' || s.phase || ':' || coalesce(s.state, '') FROM step_job s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? ORDER BY s.try" "$1" | tr '\n' ' '; }
lastseg() { db "SELECT s.job_id FROM segment s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.state = 'last'" "$1"; }
evaljob() { db "SELECT s.job_id FROM step_job s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND s.phase = 'ended' ORDER BY s.try DESC LIMIT 1" "$1"; }
repaired() { db "SELECT count(*) FROM event e JOIN run r ON r.id = e.run_id WHERE r.tag = ? AND e.kind = 'retry' AND e.detail LIKE '%behind the last segment%'" "$1"; }

new_study "$d" ss 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}'

cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
set -u
MODE=ok
NAP=6
ck="$XLOOP_RUN_DIR/checkpoint"
done=$(cat "$ck" 2>/dev/null || echo 0)
echo "START train segment=${XLOOP_SEGMENT:-none} step=$XLOOP_STEP done=$done"
[ "$MODE" = fail2 ] && [ "${XLOOP_SEGMENT:-1}" -ge 2 ] && { echo "Traceback: boom in segment 2"; exit 1; }
done=$((done + 1)); echo "$done" >"$ck"; sleep "$NAP"
[ "$done" -lt 3 ] && { echo "checkpointed $done"; exit 85; }
echo "trained $done" >"$XLOOP_RUN_DIR/model.txt"
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --mem=50M
set -u
echo "START eval step=$XLOOP_STEP segments_done=$(cat "$XLOOP_RUN_DIR/checkpoint")"
grep -q '^trained 3$' "$XLOOP_RUN_DIR/model.txt" || { echo "eval before the last segment"; exit 3; }
echo '{"score": 0.7}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh"
expect_rc 0 "adopt a training with an eval step" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh"
for m in three fail2; do
	step "new $m" u new "$m" --from base --set MODE=$m --force >/dev/null 2>&1
done
step "new unwatched" u new unwatched --from base --set NAP=5 --force >/dev/null 2>&1

# followed: a tick every second while the training goes on
expect_rc 0 "submit a two-step run whose training takes three segments" u submit three --segments 5
check "the eval waits on segment 1 or its queued continuation" grep -q '^afterok:[0-9]*(unfulfilled)?afterok:[0-9]*(unfulfilled)$' <<<"$(jt "$(db "SELECT s.job_id FROM step_job s JOIN attempt t ON t.id = s.attempt_id JOIN run r ON r.id = t.run_id WHERE r.tag = 'three'")" Dependency)"
drive_ticks 1
check "three segments and the eval make one success" grep -q '^success:' <<<"$(verdict three)"
check "  its segments: two continued, the last one judged" grep -q '^1:continued 2:continued 3:last' <<<"$(segs three)"
check "  the eval ran once" test "$(evals three)" = "1:ended:COMPLETED "
check "  followed by reconcile: not dropped and submitted again" test "$(repaired three)" = 0
e=$(evaljob three) l=$(lastseg three)
check "  the eval started after the last segment ended" test "$(ts "$(jt "$e" StartTime)")" -ge "$(ts "$(jt "$l" EndTime)")"
check "  its log is attempt1.eval.out" grep -q 'START eval step=eval segments_done=3' "$d/runs/ss/three/slurm/attempt1.eval.out"

# unwatched: no tick while the segments go on; Slurm drops the eval (every
# segment it waited for ended asking to continue), reconcile submits it again
expect_rc 0 "submit one no tick follows" u submit unwatched --segments 5
# before any tick: segments 1 and 2 end (5 s each), segment 3 is not queued
# yet, and Slurm drops the eval (its dependency can no longer be met), so
# nothing of the study is live
seg2_ended() { as_user scontrol show job -o 2>/dev/null | grep -F "Comment=xloop:ss/unwatched#1.2:" |
	grep -qE "JobState=(COMPLETED|FAILED|TIMEOUT|CANCELLED) "; }
dropped() { seg2_ended && [ -z "$(live)" ]; }
step "segment 2 of unwatched ended and Slurm dropped its eval, no tick seen" wait_for 180 dropped
drive_ticks 1
check "the unwatched one succeeds too" grep -q '^success:' <<<"$(verdict unwatched)"
check "  its eval was dropped once and submitted again behind the last segment" test "$(repaired unwatched)" = 1
check "  the first try dropped, the second ran" test "$(evals unwatched)" = "1:retried:CANCELLED 2:ended:COMPLETED "
e=$(evaljob unwatched) l=$(lastseg unwatched)
check "  the eval started after the last segment ended" test "$(ts "$(jt "$e" StartTime)")" -ge "$(ts "$(jt "$l" EndTime)")"

# a training that fails in segment 2: the eval never runs, one verdict names the training
expect_rc 0 "submit one whose training fails in segment 2" u submit fail2 --segments 5
drive_ticks 1
check "a training failure in segment 2 is the run's failure" grep -q '^failure:' <<<"$(verdict fail2)"
check "  the eval: not run" grep -q "'eval' not run: step 1 failed" <<<"$(verdict fail2)"
check "  the training's log tail is the evidence" grep -q 'boom in segment 2' <<<"$(db "SELECT evidence FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = 'fail2' AND t.n = 1")"
check "  no eval job started" test -z "$(evaljob fail2 | while read -r j; do [ -n "$(jt "$j" NodeList | grep -v null)" ] && echo "$j"; done)"
check "one verdict per run" test "$(db "SELECT count(*) FROM event WHERE kind = 'verdict'")" = 3
check "no job of the study is left" test -z "$(live)"
finish
