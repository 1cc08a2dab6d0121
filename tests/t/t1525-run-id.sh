#!/usr/bin/env bash
# A run's identity for trackers (issue 36), on the real cluster: every job
# of a run, over its segments, a Slurm requeue (scontrol requeue of the
# running segment), its later step and a second attempt, sees the same
# XLOOP_RUN_ID (a hash of study, tag and creation time), its own
# XLOOP_ATTEMPT and XLOOP_SEGMENT, and the variables xloop.json's tracker
# names (WANDB_RUN_ID set to the run id, WANDB_RESUME=allow); another run
# has another id (export's run_id). Read from the jobs' own output.
. "$(dirname "$0")/lib.sh"
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "run id" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
live() {
	local q
	q=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o '%i %Z' 2>&1) || { echo "squeue failed: $q"; return; }
	printf '%s\n' "$q" | awk -v d="$d" '$2 == d || index($2, d "/") == 1'
}
drive() {	# tick every second until none of the study's jobs is left
	local i
	for i in $(seq 1 90); do
		u tick >>"$T_TMP/ticks.txt" 2>&1
		[ -z "$(live)" ] && break
		sleep 1
	done
	u tick >>"$T_TMP/ticks.txt" 2>&1
	u tick >>"$T_TMP/ticks.txt" 2>&1
}
verdict() { db "SELECT coalesce(t.verdict, '-') FROM attempt t JOIN run r ON r.id = t.run_id WHERE r.tag = ? AND t.n = ?" "$1" "$2"; }

new_study "$d" rid 'c["resources"].update(gres="", cpus=1, mem="100M", time="00:05:00")
c["queue"]["depth"] = 0
c["segments"] = {"max": 0, "signal": "USR2", "lead": 30, "checkpoint": "checkpoint"}
c["breaker"] = {"program": 0, "no_gpu": False}
c["tracker"] = {"run_id_vars": ["WANDB_RUN_ID"], "env": {"WANDB_RESUME": "allow"}}'

# each start prints its identity; the first start of segment 1 waits
# (for the test's requeue, at most a minute); three starts make the run
cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
set -u
NAP=0
echo "ID run=$XLOOP_RUN_ID attempt=$XLOOP_ATTEMPT segment=$XLOOP_SEGMENT step=$XLOOP_STEP wandb=${WANDB_RUN_ID:-} resume=${WANDB_RESUME:-} restarts=${SLURM_RESTART_COUNT:-0}"
ck="$XLOOP_RUN_DIR/checkpoint"
done=$(( $(cat "$ck" 2>/dev/null || echo 0) + 1 ))
echo "$done" >"$ck"
if [ ! -e "$XLOOP_RUN_DIR/first" ]; then
	touch "$XLOOP_RUN_DIR/first"
	for i in $(seq 1 120); do [ -e "$XLOOP_RUN_DIR/go" ] && break; sleep 0.5; done
fi
sleep "$NAP"
[ "$done" -lt 3 ] && { echo "checkpointed $done"; exit 85; }
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --mem=50M
echo "ID run=$XLOOP_RUN_ID attempt=$XLOOP_ATTEMPT segment=$XLOOP_SEGMENT step=$XLOOP_STEP wandb=${WANDB_RUN_ID:-} resume=${WANDB_RESUME:-} restarts=${SLURM_RESTART_COUNT:-0}"
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh"
step "adopt a training with an eval step" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh"
step "new r" u new r --from base --set NAP=1 --force
step "new other" u new other --from base --set NAP=2 --force
step "submit r with --segments 3" u submit r --segments 3 --no-chain
out=$d/runs/rid/r/slurm/attempt1.out
job=$(db "SELECT job_id FROM attempt WHERE run_id = (SELECT id FROM run WHERE tag = 'r')")
for i in $(seq 1 60); do
	grep -q '^ID ' "$out" 2>/dev/null && [ "$(as_user squeue -h -j "$job" -o %T)" = RUNNING ] && break
	sleep 1
done
expect_rc 0 "scontrol requeue of the running segment 1" as_user scontrol requeue "$job"
for i in $(seq 1 20); do
	[ "$(as_user squeue -h -j "$job" -o %T 2>/dev/null)" = PENDING ] && break
	sleep 0.5
done
# Slurm holds a requeued job back for a while (BeginTime): not here
as_user scontrol update jobid="$job" StartTime=now >/dev/null 2>&1
step "let the first start go (it was requeued)" as_user touch "$d/runs/rid/r/go"
drive
check "the run succeeded once" test "$(verdict r 1)" = success

ids() { grep -h '^ID ' "$@" | sed 's/ restarts=.*//'; }
want=$(/usr/bin/python3 -c "import hashlib,sys; print(hashlib.sha256(('xloop-run\n%s\n%s\n%s' % tuple(sys.argv[1:])).encode()).hexdigest()[:32])" \
	rid r "$(db "SELECT created_at FROM run WHERE tag = 'r'")")
check "  the run id is 32 hex digits of its study, tag and creation time" grep -Eqx '[0-9a-f]{32}' <<<"$want"
check "  segment 1 started twice (requeued), then segment 2 once" \
	test "$(grep -h '^ID ' "$out" | sed 's/.* segment=\([0-9]*\) .* restarts=\([0-9]*\)$/\1:\2/' | tr '\n' ' ')" = "1:0 1:1 2:0 "
check "  every start of every segment saw the same run id, WANDB_RUN_ID and WANDB_RESUME" \
	test "$(ids "$out" | sed 's/ segment=[0-9]*//' | sort -u)" = "ID run=$want attempt=1 step=job wandb=$want resume=allow"
check "  the eval step saw them too" \
	test "$(ids "$d/runs/rid/r/slurm/attempt1.eval.out")" = "ID run=$want attempt=1 segment=1 step=eval wandb=$want resume=allow"

step "retry r: attempt 2" u retry r --no-chain
drive
check "attempt 2 succeeded" test "$(verdict r 2)" = success
check "  its jobs saw the same run id and XLOOP_ATTEMPT=2" \
	test "$(ids "$d/runs/rid/r/slurm/attempt2.out" "$d/runs/rid/r/slurm/attempt2.eval.out" | tr '\n' ' ')" = "ID run=$want attempt=2 segment=1 step=job wandb=$want resume=allow ID run=$want attempt=2 segment=1 step=eval wandb=$want resume=allow "

# export names each run's id: r's is the one its jobs saw, other's another
rid_of() { u export --format jsonl | /usr/bin/python3 -c "import json,sys
print([json.loads(l)['run_id'] for l in sys.stdin if json.loads(l)['tag'] == sys.argv[1]][0])" "$1"; }
check "export gives r the run id its jobs saw" test "$(rid_of r)" = "$want"
check "another run has another id" test "$(rid_of other)" != "$want"
finish
