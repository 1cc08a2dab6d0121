#!/usr/bin/env bash
# Loop policy on the real cluster: the circuit breaker (three program
# failures planned, feeding stops after two, one notification), adjust of
# a pending job (memory changed, dependency kept), why (the GPU named as
# the blocker), the secret scan (refused, nothing committed), --nice, and
# two studies sharing the one GPU in turn with chain "any-user".
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "loop policy" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" pol 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0'
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
MODE=ok
SLEEP=1
echo "START mode=$MODE device=cpu"
while [ -e @T@/hold ]; do sleep 0.5; done
sleep "$SLEEP"
case $MODE in fail*) echo "Traceback: $MODE"; echo FAILED; exit 1 ;; esac
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"; echo FINISHED
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
# a job waits while the test holds the jobs (the file hold): a barrier
step "the hold in job.sh" sed -i "s|@T@|$T_TMP|" "$T_TMP/job.sh"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
idle() { [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; }

# --- the circuit breaker
expect_rc 0 "plan three changes that fail" u plan add MODE=fail1 MODE=fail2 MODE=fail3
for i in $(seq 1 90); do
	u tick >>"$T_TMP/ticks.txt" 2>&1
	[ "$(db "SELECT count(*) FROM attempt WHERE verdict = 'failure'")" -ge 2 ] && idle && break
	sleep 1
done
u tick >>"$T_TMP/ticks.txt" 2>&1
u tick >>"$T_TMP/ticks.txt" 2>&1
check "two failures were judged" test "$(db "SELECT count(*) FROM attempt WHERE verdict = 'failure'")" = 2
check "the third change was not submitted" test "$(db "SELECT count(*) FROM attempt WHERE n > 0")" = 2
check "tick said feeding stopped, once" test "$(grep -c '^feeding stopped: 2 program failures in a row' "$T_TMP/ticks.txt")" = 1
check "one notification was queued" test "$(db "SELECT count(*) FROM outbox WHERE kind = 'breaker'")" = 1
u next >"$T_TMP/brief.txt" 2>&1
check "the briefing says feeding is stopped and how to resume" sh -c "grep -q '^FEEDING STOPPED: 2 program failures in a row' '$T_TMP/brief.txt' && grep -q 'xloop breaker reset' '$T_TMP/brief.txt'"
check "next did not submit either" test "$(db "SELECT count(*) FROM attempt WHERE n > 0")" = 2
u breaker --json >"$T_TMP/breaker.json"
check "breaker status says open" test "$(jget .open <"$T_TMP/breaker.json")" = True
validates "breaker --json validates" breaker "$T_TMP/breaker.json"
expect_rc 0 "breaker reset" u breaker reset
u next >/dev/null 2>&1
check "after the reset the third change is submitted" test "$(db "SELECT count(*) FROM attempt WHERE n > 0")" = 3
for i in $(seq 1 60); do u next >/dev/null 2>&1; idle && break; sleep 1; done
u next >/dev/null 2>&1
check "one failure after a reset does not trip it again" sh -c "u() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' \"\$@\"; }; u breaker | grep -q 'is closed'"

# --- adjust and why: one job holds the GPU, one waits behind it
expect_rc 0 "a long run" u new long --from base --set SLEEP=110
expect_rc 0 "a run to wait" u new waiting --from base --set SLEEP=2
expect_rc 0 "a run to wait on the GPU" u new gpuwait --from base --set SLEEP=3
expect_rc 0 "submit the long one" u submit long --no-chain
expect_rc 0 "submit one behind it" u submit waiting
for i in $(seq 1 30); do u status long --json 2>/dev/null | grep -q '"state": "RUNNING"' && break; sleep 1; done
expect_rc 0 "submit one next to it, not chained, with --nice 50" u submit gpuwait --no-chain --nice 50
job() { u status "$1" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["attempts"][-1]["job_id"])'; }
jl=$(job long) jw=$(job waiting) jg=$(job gpuwait)
check "--nice reached Slurm" sh -c "scontrol show job $jg | grep -q 'Nice=50'"
u adjust waiting --mem 300M --json >"$T_TMP/adjust.json" 2>&1
check "adjust the waiting job's memory" sh -c "[ $? = 0 ] || { cat '$T_TMP/adjust.json'; exit 1; }"
validates "adjust --json validates" adjust "$T_TMP/adjust.json"
check "Slurm has the new memory" sh -c "scontrol show job $jw | grep -Eq 'MinMemoryNode=300M|mem=300M'"
check "and the dependency is kept" sh -c "scontrol show job $jw | grep -q 'Dependency=afterany:$jl'"
check "the attempt records it" sh -c "u() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' \"\$@\"; }; u status waiting --json | grep -q 'adjust:--mem=300M'"
expect_rc 65 "adjust of a running job says to retry" u adjust long --mem 300M
check "and says so" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' adjust long --mem 300M 2>&1 | grep -q 'xloop retry long'"
expect_rc 2 "adjust needs exactly one of --mem, --time" u adjust waiting
expect_rc 65 "adjust beyond the node's memory is refused" u adjust waiting --mem 900G
u why gpuwait --json >"$T_TMP/why.json" 2>"$T_TMP/why.err"
check "why names the GPU as the blocker" sh -c "grep -q '\"blocker\": \"the GPU' '$T_TMP/why.json' || { cat '$T_TMP/why.json' '$T_TMP/why.err'; exit 1; }"
check "why explains the reason" sh -c "grep -q '\"meaning\":' '$T_TMP/why.json'"
validates "why --json validates" why "$T_TMP/why.json"
u cancel long --json >"$T_TMP/cancel.json" 2>/dev/null
validates "cancel --json validates" cancel "$T_TMP/cancel.json"
u cancel waiting >/dev/null 2>&1
u cancel gpuwait >/dev/null 2>&1
for i in $(seq 1 30); do idle && break; sleep 1; done

# --- the secret scan
printf '#!/bin/bash\nLR=1\nexport HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\necho START\n' >"$T_TMP/leaky.sh"
step "chmod 644 leaky.sh" chmod 644 "$T_TMP/leaky.sh"
head0=$(as_user git -C "$d" rev-parse HEAD)
as_user "$X" -C "$d" adopt "$T_TMP/leaky.sh" --tag leaky >"$T_TMP/leak.out" 2>"$T_TMP/leak.err"
check "a job.sh with a token is refused (65)" test $? = 65
check "with the line and what to do" sh -c "grep -q 'line 3 holds what looks like a Hugging Face token' '$T_TMP/leak.err' && grep -q 'environment' '$T_TMP/leak.err'"
check "nothing was committed or created" sh -c "[ \"\$(runuser -u '$XLOOP_TEST_USER' -- git -C '$d' rev-parse HEAD)\" = '$head0' ] && [ ! -e '$d/runs/pol/leaky' ]"
expect_rc 65 "a token given as a value is refused too" u new tok --from base --set 'MODE=ghp_0123456789abcdefghijABCDEFGHIJ0123456789'
as_user "$X" -C "$d" --allow-secret adopt "$T_TMP/leaky.sh" --tag leaky >/dev/null 2>"$T_TMP/allow.err"
check "--allow-secret commits it, loudly" sh -c "grep -q 'COMMITTING A SECRET' '$T_TMP/allow.err' && [ -e '$d/runs/pol/leaky/job.sh' ]"
check "and it is recorded (event and commit message)" sh -c "[ \$(/usr/bin/python3 -c \"import sqlite3; print(sqlite3.connect('$d/.xloop/state.db').execute(\\\"SELECT count(*) FROM event WHERE kind = 'secret-allowed'\\\").fetchone()[0])\") = 1 ] && runuser -u '$XLOOP_TEST_USER' -- git -C '$d' log -1 --format=%B | grep -q 'allow-secret'"

# --- a GPU job that logs no GPU stops the feeding at once
step "edit xloop.json" /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['breaker']['no_gpu']=True; json.dump(c, open(p,'w'), indent=2)" "$d/xloop.json"
expect_rc 0 "a reset: only verdicts from now on count" u breaker reset
expect_rc 0 "a run on the CPU" u new oncpu --from base --set SLEEP=1.5
expect_rc 0 "plan one more" u plan add SLEEP=5
expect_rc 0 "submit the CPU run" u submit oncpu --no-chain
for i in $(seq 1 30); do u tick >>"$T_TMP/ticks2.txt" 2>&1; idle && break; sleep 1; done
u tick >>"$T_TMP/ticks2.txt" 2>&1
check "feeding stopped because the START line shows no GPU" grep -q "^feeding stopped: oncpu attempt 1 asked for gpu:1 but its START line shows no GPU" "$T_TMP/ticks2.txt"
check "so the planned change waits" sh -c "u() { runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' \"\$@\"; }; u plan ls | grep -q 'SLEEP=5'"
expect_rc 0 "resume --feed closes it" u resume --feed
step "edit xloop.json" /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['breaker']['no_gpu']=False; json.dump(c, open(p,'w'), indent=2)" "$d/xloop.json"
for i in $(seq 1 30); do idle && break; sleep 1; done

# --- two studies share the one GPU in turn
e=$(user_dir)
new_study "$e" other 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"]["depth"] = 0
c["slurm"]["chain"] = "any-user"'
step "edit xloop.json" /usr/bin/python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['slurm']['chain']='any-user'; json.dump(c, open(p,'w'), indent=2)" "$d/xloop.json"
v() { as_user "$X" -C "$e" "$@"; }
expect_rc 0 "adopt in the second study" v adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
# the same configuration twice on purpose (--force): the jobs are what counts
for t in a1 a2; do u new "$t" --from base --set SLEEP=4 --force >/dev/null; done
for t in b1 b2; do v new "$t" --from base --set SLEEP=4 --force >/dev/null; done
# held until the chain was read: a job that ended leaves no dependency
step "hold the jobs" touch "$T_TMP/hold"
u submit a1 >/dev/null; v submit b1 >/dev/null; u submit a2 >/dev/null; v submit b2 >/dev/null
ja1=$(job a1) ja2=$(job a2)
jb() { v status "$1" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["attempts"][-1]["job_id"])'; }
jb1=$(jb b1) jb2=$(jb b2)
check "b1 waits for a1 (the other study)" sh -c "scontrol show job $jb1 | grep -q 'Dependency=afterany:$ja1'"
check "a2 waits for b1" sh -c "scontrol show job $ja2 | grep -q 'Dependency=afterany:$jb1'"
check "b2 waits for a2" sh -c "scontrol show job $jb2 | grep -q 'Dependency=afterany:$ja2'"
step "let the jobs go" rm "$T_TMP/hold"
wait_for 240 idle
check "they ran one after the other on the GPU" /usr/bin/python3 - "$ja1" "$jb1" "$ja2" "$jb2" <<'PY'
import subprocess, sys
spans = []
for j in sys.argv[1:]:
    out = subprocess.run(["scontrol", "show", "job", "-o", j], capture_output=True, text=True).stdout
    kv = dict(w.split("=", 1) for w in out.split() if "=" in w)
    spans.append((kv["StartTime"], kv["EndTime"]))
print(spans)
assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans
PY
finish
