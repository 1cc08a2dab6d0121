#!/usr/bin/env bash
# The loop on the real cluster: a baseline and changes where one run
# succeeds with a better score, one exits 0 without cv.json, one exits 1,
# one leaves a stale cv.json; verdicts, decisions.md commits, the briefing,
# resume after the agent forgot everything, cancel, OOM and TIMEOUT.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

step "git init -q -b main" as_user git -C "$d" init -q -b main
step "git config user.name Test User" as_user git -C "$d" config user.name "Test User"
step "git config user.email test@example.com" as_user git -C "$d" config user.email test@example.com
step "init --study s" u init --study s >/dev/null
step "edit xloop.json" /usr/bin/python3 - "$d/xloop.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["resources"].update(cpus=1, mem="200M", time="00:02:00")
c["queue"]["depth"] = 1
# failures in a row are what this test makes; its jobs compute on the CPU
c["breaker"] = {"program": 0, "no_gpu": False}
c.setdefault("driver", {})["mode"] = "none"  # counts jobs: no feeders
json.dump(c, open(p, "w"), indent=2)
PY

# MODE picks what the job does; the score is 1/(1+LR) so LR=0 is best
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
MODE=ok
LR=1
echo "START mode=$MODE lr=$LR device=cpu"
case $MODE in
ok) python3 -c "import json; json.dump({'score': 1/(1+$LR)}, open('$XLOOP_RUN_DIR/cv.json', 'w'))" ;;
nocv) rm -f "$XLOOP_RUN_DIR/cv.json" ;;
fail) echo "Traceback: boom"; echo FAILED; exit 1 ;;
stale) echo '{"score": 0.99}' >"$XLOOP_RUN_DIR/cv.json"; touch -d '2001-01-01' "$XLOOP_RUN_DIR/cv.json" ;;
oom) python3 -c "x = bytearray(600 * 1024 * 1024); print(len(x))" ;;
slow) sleep 300 ;;
esac
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"

expect_rc 0 "adopt the baseline" u adopt "$T_TMP/job.sh" --tag base
out=$(u next --json 2>&1)
check "next with nothing to do says how to start" sh -c "printf '%s' '$out' | grep -q 'submit the baseline'"
expect_rc 0 "submit the baseline" u submit base

# wait for all our jobs to end, driving the loop with next
drive() {
	local i
	for i in $(seq 1 ${1:-90}); do
		u next >"$T_TMP/brief.txt" 2>&1
		[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
		sleep 1
	done
	u next >"$T_TMP/brief.txt" 2>&1
}
drive
check "baseline judged a success" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status base --json | grep -q '\"verdict\": \"success\"'"

expect_rc 0 "plan four changes" u plan add LR=0 MODE=nocv MODE=fail --from base
# a stale cv.json: the job leaves one dated before the attempt started
expect_rc 0 "plan the stale case" u plan add MODE=stale --from base
out=$(u plan ls)
check "plan ls lists four entries" sh -c "[ \$(printf '%s\n' '$out' | grep -c ' from base') = 4 ]"
u next --json >"$T_TMP/next1.json" 2>"$T_TMP/next1.err"
validates "next --json validates" next "$T_TMP/next1.json"
nsub=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["submitted"]))' "$T_TMP/next1.json")
check "next submitted two (one running, one waiting)" test "$nsub" = 2
for i in $(seq 1 150); do
	u next >>"$T_TMP/briefings.txt" 2>&1
	n=$(u plan ls | grep -c ' from base')
	[ "$n" = 0 ] && [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
# the last job may have left the queue after that next: its verdict (and
# the failure's log tail) goes to the briefings too
u next >>"$T_TMP/briefings.txt" 2>&1
u next --json >"$T_TMP/next2.json" 2>&1
u status --json >"$T_TMP/st.json"
# "verdict reason" of a run's latest attempt
verdict() { /usr/bin/python3 -c "import json,sys
d=json.load(open(sys.argv[2]))
r=[x for x in d['runs'] if x['tag']==sys.argv[1]]
a=r[0]['attempts'][-1] if r and r[0]['attempts'] else {'verdict': 'none', 'verdict_reason': ''}
print(a['verdict'], a['verdict_reason'])" "$1" "$T_TMP/st.json"; }
count_success() { /usr/bin/python3 -c "import json,sys
d=json.load(open(sys.argv[1]))
print(sum(1 for r in d['runs'] for a in r['attempts'][-1:] if a['verdict']=='success'))" "$T_TMP/st.json"; }
check "LR=0 succeeded" grep -q '^success' <<<"$(verdict LR-0)"
check "exit 0 without cv.json failed" grep -q '^failure.*no cv.json' <<<"$(verdict MODE-nocv)"
check "exit 1 failed with its exit code" grep -q '^failure FAILED (ExitCode 1:0)' <<<"$(verdict MODE-fail)"
check "a stale cv.json failed" grep -q '^failure.*stale' <<<"$(verdict MODE-stale)"
check "exactly one success among the four changes (plus the baseline)" test "$(count_success)" = 2
check "the best run is LR-0" grep -q '"best": "LR-0"' "$T_TMP/st.json"
ncommits=$(as_user git -C "$d" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict')
check "one decisions.md commit per verdict (5)" test "$ncommits" = 5
check "verdict commits touch only decisions.md and the run's cv.json" sh -c \
	"[ -z \"\$(runuser -u '$XLOOP_TEST_USER' -- git -C '$d' log --format= --name-only --grep '^xloop: verdict' | grep -v '^ops/decisions.md$' | grep -v '^runs/s/[^/]*/cv.json$' | grep -v '^$')\" ]"
check "the briefing showed the failure's log tail" grep -q '| Traceback: boom' "$T_TMP/briefings.txt"
check "the decision log has the failure's reason" grep -q 'FAILED (ExitCode 1:0)' "$d/ops/decisions.md"

# a second next right after reports nothing new
u next >"$T_TMP/again.txt" 2>&1
check "a second next prints nothing new" grep -q 'finished since the last briefing: nothing' "$T_TMP/again.txt"

# the agent forgets everything: resume tells the whole story from the DB
step "decide LR=0 is the way; drop the MODE experiments --run LR-0" as_user "$X" -C "$d" decide "LR=0 is the way; drop the MODE experiments" --run LR-0 >/dev/null
/usr/bin/sqlite3 "$d/.xloop/state.db" "DELETE FROM kv WHERE key = 'briefing_seen'" 2>/dev/null ||
	/usr/bin/python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM kv WHERE key='briefing_seen'\"); c.commit()" "$d/.xloop/state.db"
u resume >"$T_TMP/resume.txt" 2>&1
for t in base LR-0 MODE-nocv MODE-fail MODE-stale; do
	check "resume tells about $t" grep -q "^  $t attempt" "$T_TMP/resume.txt"
done
check "resume states the rules" grep -q 'one change per run' "$T_TMP/resume.txt"
check "resume names the best run" grep -q '^best so far: LR-0' "$T_TMP/resume.txt"
check "resume gives a next action" grep -q '^next: ' "$T_TMP/resume.txt"
u resume --json >"$T_TMP/resume.json" 2>&1
validates "resume --json validates" next "$T_TMP/resume.json"
check "decide committed the decision" sh -c "grep -q 'drop the MODE experiments' '$d/ops/decisions.md'"

# cancel while pending, OOM and TIMEOUT
expect_rc 0 "new slow run" u new slow --from base --set MODE=slow
expect_rc 0 "new oom run" u new oom --from base --set MODE=oom
expect_rc 0 "submit slow with a 1-minute limit" u submit slow --time 1
expect_rc 0 "submit oom behind it" u submit oom
expect_rc 0 "cancel oom while it is pending" u cancel oom
u retry oom --no-chain --json >"$T_TMP/retry.json" 2>&1
check "retry oom on its own" sh -c "[ $? = 0 ] || { cat '$T_TMP/retry.json'; exit 1; }"
validates "retry --json validates" retry "$T_TMP/retry.json"
for i in $(seq 1 150); do
	u judge >/dev/null 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
u judge >/dev/null 2>&1
u status --json >"$T_TMP/st.json"
check "the pending job cancelled is judged CANCELLED by the user" grep -q 'CANCELLED by you' "$T_TMP/st.json"
check "the slow job is judged TIMEOUT" grep -q '^failure TIMEOUT' <<<"$(verdict slow)"
check_oom "the job over its memory is judged OUT_OF_MEMORY" grep -q '^failure OUT_OF_MEMORY' <<<"$(verdict oom)"
u next >"$T_TMP/final.txt" 2>&1
check_oom "the briefing proposes more memory or time" grep -Eq 'xloop retry (oom --mem|slow --time)' "$T_TMP/final.txt"

finish
