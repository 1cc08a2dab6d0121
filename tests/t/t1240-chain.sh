#!/usr/bin/env bash
# The chain on the real cluster: `why` on a job held by the chain names the
# job it waits for and estimates the start from how long the study's runs
# take (not from --time); `prioritize` moves a queued run to the front of
# its line with scontrol update (A <- B <- C becomes A <- C <- B): nothing
# cancelled, no job held afterwards, and they run in the new order, one
# after the other; running, finished and sweep-task runs are refused (65);
# a prioritize killed while it holds a job: the next tick releases it.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

# --time 10 min: a --test-only estimate from the limits would say minutes
new_study "$d" ch 'c["resources"].update(cpus=1, mem="200M", time="00:10:00")
c["queue"]["depth"] = 0'

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
SLEEP=1
echo "START sleep=$SLEEP device=cpu"
#GATE
sleep "$SLEEP"
python3 -c "import json; json.dump({'score': 0.5}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
# A waits at its gate until the test has moved the line (lib.sh's gate_job):
# however busy the machine, B and C are still queued when prioritize runs
step "gate_job job.sh" gate_job "$T_TMP/job.sh"
step "short may run" open_gate short
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
idle() { [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; }
drive() { local i; for i in $(seq 1 ${1:-90}); do u next >/dev/null 2>&1; idle && break; sleep 1; done; u next >/dev/null 2>&1; }

# one short run that succeeds: the study's runs take a few seconds
expect_rc 0 "a short run" u new short --from base --set SLEEP=2
expect_rc 0 "submit it" u submit short
drive
check "it succeeded" test "$(db "SELECT verdict FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'short'")" = success

expect_rc 0 "run A" u new A --from base --set SLEEP=5
expect_rc 0 "run B" u new B --from base --set SLEEP=3
expect_rc 0 "run C" u new C --from base --set SLEEP=4
expect_rc 0 "submit A" u submit A
expect_rc 0 "submit B behind A" u submit B
expect_rc 0 "submit C behind B" u submit C
job() { db "SELECT a.job_id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = '$1' ORDER BY a.id DESC LIMIT 1"; }
ja=$(job A) jb=$(job B) jc=$(job C)
dep() { as_user scontrol show job -o "$1" | grep -o 'Dependency=[^ ]*' | sed 's/(.*//'; }
check "Slurm chains A <- B <- C" test "$(dep "$jb") $(dep "$jc")" = "Dependency=afterany:$ja Dependency=afterany:$jb"
step "A runs (held at its gate)" wait_for 240 at_gate A

# --- why on a job held by the chain
u why C --json >"$T_TMP/why.json" 2>"$T_TMP/why.err"
check "why C names the job it waits for (B)" sh -c "grep -q \"\\\"blocker\\\": \\\"the chain: it waits for job $jb (B\" '$T_TMP/why.json' || { cat '$T_TMP/why.json' '$T_TMP/why.err'; exit 1; }"
validates "why --json validates" why "$T_TMP/why.json"
check "and says B waits for A" sh -c "[ \"\$(/usr/bin/python3 -c 'import json,sys; print(\" \".join(a[\"job_id\"] for a in json.load(open(sys.argv[1]))[\"ahead\"]))' '$T_TMP/why.json')\" = '$jb $ja' ]"
s=$(jget .starts_in_s <"$T_TMP/why.json" 2>/dev/null || echo none)
check "the estimate comes from the study's run times (seconds), not --time (minutes)" sh -c "[ '$s' != none ] && [ '$s' -lt 60 ]"
t=$(jget .typical_s <"$T_TMP/why.json" 2>/dev/null || echo 0)
check "the typical run time is the short run's" sh -c "[ '$t' -ge 1 ] && [ '$t' -le 30 ]"
u why C >"$T_TMP/why.txt" 2>&1
check "the text names both jobs ahead by id and tag" sh -c "grep -q 'waits for job $jb (B, pending)' '$T_TMP/why.txt' && grep -q 'which waits for job $ja (A, running' '$T_TMP/why.txt'"
check "and no start in minutes from the limits" sh -c "! grep -q 'would start in [0-9]* min' '$T_TMP/why.txt'"

# --- prioritize
expect_rc 65 "a running run is refused" u prioritize A
check "and says why" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' prioritize A 2>&1 | grep -q 'running already'"
expect_rc 65 "a finished run is refused" u prioritize short
expect_rc 0 "B is first in its line already" u prioritize B
u prioritize B --json >"$T_TMP/pb.json" 2>&1
check "prioritize --json validates (nothing moved)" sh -c "$V '$S/prioritize.schema.json' <'$T_TMP/pb.json' && grep -q '\"moved\": false' '$T_TMP/pb.json'"
check "which changed nothing" test "$(dep "$jb") $(dep "$jc")" = "Dependency=afterany:$ja Dependency=afterany:$jb"
u prioritize C --json >"$T_TMP/pc.json" 2>"$T_TMP/pc.err"
check "prioritize C" sh -c "grep -q '\"moved\": true' '$T_TMP/pc.json' || { cat '$T_TMP/pc.json' '$T_TMP/pc.err'; exit 1; }"
validates "prioritize --json validates" prioritize "$T_TMP/pc.json"
check "Slurm has A <- C <- B now" test "$(dep "$jc") $(dep "$jb")" = "Dependency=afterany:$ja Dependency=afterany:$jc"
check "nothing was cancelled" test "$(as_user squeue -h -j "$ja,$jb,$jc" -o %i | wc -l)" = 3
check "and B is not left held" sh -c "! runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' scontrol show job -o $jb | grep -Eq 'Priority=0 |JobHeldUser'"
check "the attempts record what they wait for" test "$(db "SELECT r.tag || ':' || a.after_job FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag IN ('B', 'C') ORDER BY r.tag")" = "$(printf 'B:%s\nC:%s' "$jc" "$ja")"
check "an event records it" test "$(db "SELECT count(*) FROM event WHERE kind = 'prioritized'")" = 1
# killed while it holds the job it swaps: the next tick releases it
expect_rc 137 "prioritize B killed while C is held" \
	as_user env XLOOP_CRASH_AT=prioritize-after-hold "${XLOOP_ASAN_BIN:?}" -C "$d" prioritize B
held() { as_user scontrol show job -o "$1" | grep -Eq 'Priority=0 |JobHeldUser'; }
check "C is left held" held "$jc"
u tick >/dev/null 2>&1
check "the next tick releases it" sh -c "! runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' scontrol show job -o $jc | grep -Eq 'Priority=0 |JobHeldUser'"
check "and says so in an event" test "$(db "SELECT count(*) FROM event WHERE kind = 'repaired' AND detail LIKE 'job $jc, held by a%released'")" = 1
u why B >"$T_TMP/why2.txt" 2>&1
check "why B follows the new line" sh -c "grep -q 'waits for job $jc (C, pending)' '$T_TMP/why2.txt' || { cat '$T_TMP/why2.txt'; exit 1; }"

# a sweep task cannot move on its own
expect_rc 0 "a sweep behind them" u sweep --name sw --set SLEEP=1
arr=$(job sw--SLEEP-1)
check "it goes behind the end of the line (B), not the newest job (C)" test "$(dep "${arr%%_*}")" = "Dependency=afterany:$jb"
expect_rc 65 "a sweep task is refused" u prioritize sw--SLEEP-1
check "and says it is a sweep task" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' prioritize sw--SLEEP-1 2>&1 | grep -q 'task of sweep sw'"

# they run in the new order, one after the other
step "open every gate" open_gate all
drive 240
times=$(db "SELECT r.tag, a.started_at, a.ended_at, a.verdict FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag IN ('A', 'B', 'C') ORDER BY a.started_at")
check "they ran A, C, B" test "$(echo "$times" | cut -d'|' -f1 | tr '\n' ' ')" = "A C B "
check "each started after the one before ended" sh -c "echo '$times' | awk -F'|' 'NR > 1 && \$2 < end { bad = 1 } { end = \$3 } END { exit bad }'"
check "all three succeeded" test "$(echo "$times" | cut -d'|' -f4 | sort -u)" = success
finish
