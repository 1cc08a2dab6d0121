#!/usr/bin/env bash
# What status, next and resume tell without Slurm, on a study whose
# attempts are written into its state DB: status's columns fit 64-character
# tags and long changes, finished attempts show their elapsed time; next
# says why it fed nothing and who feeds the queue once the session ends
# (nothing, then cron once `xloop tick` ran); resume tells the study so far
# (the best lineage with scores, every failure with its reason, the latest
# decisions); next_action carries an argv and why; every document
# validates against its schema and no field says "None"; the best's score
# is labelled by what chose it, with a legend of ± (issue 44).
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" br ''

printf '#!/bin/bash\nLR=0.1\nDEPTH=3\nPATH_TO_DATA=/data/a\necho "START lr=$LR"\n' >"$T_TMP/job.sh"
echo '{"score": 0.5}' >"$T_TMP/cv.json"
step "job.sh, cv.json readable" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
long=a-64-character-tag-which-is-as-long-as-xloop-allows-for-a-run-x1
check "the long tag is 64 characters" test ${#long} = 64
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a child" u new lr-small --from base --set LR=0.01
expect_rc 0 "a failing child" u new depth-9 --from base --set DEPTH=9
expect_rc 0 "a grandchild" u new deeper --from lr-small --set DEPTH=4 --force
expect_rc 0 "a child with a long tag and a long change" u new "$long" --from base \
	--set PATH_TO_DATA=/a/long/path/to/the/training/data/of/this/study/v2
expect_rc 0 "a decision" u decide "small LR looks right; next try depth" --run lr-small

step "attempts in the DB" /usr/bin/python3 - "$d" <<'PY'
import sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/.xloop/state.db")
ids = {t: i for i, t in c.execute("SELECT id, tag FROM run")}
def att(tag, n, start, end, state, verdict, score, reason, cls=None):
    c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
              " submitted_at, started_at, ended_at, state, verdict, failure_class,"
              " verdict_reason, score, decided) VALUES (?, ?, ?, 'submitted', ?, ?, ?, ?, ?,"
              " ?, ?, ?, ?, ?, ?, 1)", (ids[tag], n, "tok-%s-%d" % (tag, n),
              str(100 + ids[tag] * 10 + n), "%s/runs/br/%s/slurm/attempt%d.out" % (d, tag, n),
              start - 5, start - 5, start, end, state, verdict, cls, reason, score))
att("lr-small", 1, 1000, 1010, "COMPLETED", "success", 0.7, "COMPLETED 0:0, score 0.7")
att("depth-9", 1, 1012, 1020, "FAILED", "failure", None, "FAILED (ExitCode 1:0)", "program")
att("deeper", 1, 1030, 4701, "COMPLETED", "success", 0.9, "COMPLETED 0:0, score 0.9")
c.commit()
PY

# status: columns fit, finished attempts show how long they ran
step "status" u status >"$T_TMP/st.txt" 2>"$T_TMP/st.err"
colpos() { /usr/bin/python3 - "$1" "$T_TMP/st.txt" <<'PY'
import sys
word, path = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines()
head = next(l for l in lines if " TAG " in l or l.lstrip().startswith("TAG"))
at = head.index(word)
rows = [l for l in lines[lines.index(head) + 1:] if l.startswith(("  ", "* "))
        and not l.startswith("  warning")]
# ATT is right-aligned: its last character lines up
at += len(word) - 1 if word == "ATT" else 0
bad = [l for l in rows if l[at - 1] != " " and word != "ATT" or l[at] == " "]
print("%d rows, column %s at %d" % (len(rows), word, at))
sys.exit(1 if bad or len(rows) != 5 else 0)
PY
}
for c in PARENT CHANGE STATE ATT JOB ELAPSED SCORE; do
	check "status: column $c lines up under a 64-character tag" colpos $c
done
check "status: the long change is shown whole" grep -q 'PATH_TO_DATA /data/a->/a/long/path/to/the/training/data/of/this/study/v2 ' "$T_TMP/st.txt"
check "status: a finished attempt shows its elapsed time" grep -Eq '^  lr-small .* 0:10 +0\.7$' "$T_TMP/st.txt"
check "status: an hour is H:MM:SS" grep -Eq '^\* deeper .* 1:01:11 +0\.9$' "$T_TMP/st.txt"
step "status --json" u status --json >"$T_TMP/st.json" 2>/dev/null
validates "status --json validates" status "$T_TMP/st.json"
check "status --json: elapsed of a finished attempt" test "$(jget .runs.1.attempts.0.elapsed <"$T_TMP/st.json")" = 0:10
check "status says nothing feeds after this session" grep -q '^after this session: nothing' "$T_TMP/st.txt"
# issue 44: the best's one score, labelled (the estimate the choice uses:
# plain means here), n beside it, and what ± means said where it is read
check "status: the best's score is labelled by what chose it, with n" \
	grep -Eq '^study br: [0-9]+ runs, best deeper: score mean 0\.9 \(n=1, unchecked\)$' "$T_TMP/st.txt"
check "status: a legend says what ± is" grep -qx '(± is one posterior sd of the figure before it; raw mean: the plain mean of its runs; help glossary)' "$T_TMP/st.txt"
check "status --json: the estimate, its kind and the raw mean" \
	test "$(jget .best_score.estimate_kind <"$T_TMP/st.json"):$(jget .best_score.estimate <"$T_TMP/st.json"):$(jget .best_score.score <"$T_TMP/st.json")" = 'mean:0.9:0.9'

# next: why nothing was fed, who feeds next
step "next" u next >"$T_TMP/next.txt" 2>&1
check "next: fed nothing because the plan is empty" grep -q '^fed nothing: the plan is empty$' "$T_TMP/next.txt"
check "next: nothing feeds once the session ends" grep -q '^after this session: nothing: no cron runs `xloop tick`' "$T_TMP/next.txt"
step "next --json" u next --json >"$T_TMP/next.json" 2>/dev/null
validates "next --json validates" next "$T_TMP/next.json"
check "next --json: feed.stopped is plan_empty" test "$(jget .feed.stopped <"$T_TMP/next.json")" = plan_empty
check "next --json: next_action has an argv" test "$(jget .next_action.argv <"$T_TMP/next.json")" = '["xloop", "next", "--set", "VAR=VALUE"]'
check "next --json: and says what to fill in" test "$(jget .next_action.placeholders <"$T_TMP/next.json")" = '["VAR=VALUE"]'
check "next --json: and why" test "$(jget .next_action.why <"$T_TMP/next.json")" = 'the plan is empty and nothing runs'
expect_rc 0 "a tick (as cron runs it)" u tick
step "next after the plan" u next >"$T_TMP/next2.txt" 2>&1
check "next: after a tick, cron feeds" grep -Eq '^after this session: cron: `xloop tick` runs and keeps the queue fed \(the last tick ran [0-9]+ s ago\)$' "$T_TMP/next2.txt"
check "next: with a plan, nothing to decide names the feeder" sh -c \
	"'$X' --allow-root -C '$d' plan add DEPTH=5 --from deeper >/dev/null 2>&1 || runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan add DEPTH=5 --from deeper >/dev/null"
u next --json >"$T_TMP/next3.json" 2>/dev/null
check "next --json: feed.feeder.kind is cron" test "$(jget .feed.feeder.kind <"$T_TMP/next3.json")" = cron

# resume, for an agent with no memory
step "resume" u resume >"$T_TMP/resume.txt" 2>&1
check "resume: who keeps the loop going and the next step come first" sh -c "head -3 '$T_TMP/resume.txt' | grep -q '^  after this session: ' && head -3 '$T_TMP/resume.txt' | grep -q '^  next: '"
check "resume: the best lineage, root first, with scores" sh -c "grep -A3 '^  best lineage (root first):' '$T_TMP/resume.txt' | tr -s ' ' | tr '\n' '|' | grep -q '^ best lineage (root first):| base (root) score 0.5| lr-small LR: 0.1 -> 0.01 score 0.7| deeper DEPTH: 3 -> 4 score 0.9|'"
check "resume: every failure with its reason" grep -q '^    depth-9 attempt 1 (program): FAILED (ExitCode 1:0)  \[DEPTH: 3 -> 9\]' "$T_TMP/resume.txt"
check "resume: the latest decisions" grep -q '^      small LR looks right; next try depth' "$T_TMP/resume.txt"
step "resume --json" u resume --json >"$T_TMP/resume.json" 2>/dev/null
validates "resume --json validates" next "$T_TMP/resume.json"
check "resume --json: the lineage ends at the best run" test "$(jget .history.best_lineage.2.tag <"$T_TMP/resume.json")" = deeper
check "resume --json: one failure" test "$(jget .history.failures.0.tag <"$T_TMP/resume.json")" = depth-9
check "resume: the best's score as status says it, and the legend of ±" sh -c \
	"grep -qx 'best so far: deeper, score mean 0.9 (n=1, unchecked)' '$T_TMP/resume.txt' && grep -q '^  (± is one posterior sd' '$T_TMP/resume.txt'"
check "no document says \"None\"" sh -c "! grep -l '\"None\"' '$T_TMP'/*.json"

# status --sort score: the best scores first, unscored runs last (issue 27)
step "status --sort score" u status --sort score >"$T_TMP/sorted.txt" 2>&1
check "status --sort score: highest first (goal max), unscored last" test "$(grep -E '^(\*| ) ' "$T_TMP/sorted.txt" | grep -v ' TAG ' | awk '{ print ($1 == "*" ? $2 : $1) }' | tr '\n' ' ')" = "deeper lr-small base depth-9 $long DEPTH-5 "
expect_rc 2 "status --sort takes score or created" u status --sort bogus
expect_rc 2 "status T --sort is a usage error" u status deeper --sort score

# the briefing's next step to check gains against noise (issue 27)
check "no seed variable: the briefing says to name one" grep -q '^  (gains are not checked against noise: no replicates yet: `xloop space seed VAR`, then `xloop replicate best`)' "$T_TMP/next.txt"
expect_rc 0 "name a seed variable" u space seed PATH_TO_DATA
step "next after space seed" u next >"$T_TMP/next4.txt" 2>&1
check "after space seed the briefing no longer says to name one" sh -c "! grep -q 'space seed VAR' '$T_TMP/next4.txt' || { cat '$T_TMP/next4.txt'; exit 1; }"
check "it says replicates are next" grep -q '^  (gains are not checked against noise: the seed variable is PATH_TO_DATA, no replicate has ended yet: `xloop replicate best` runs them' "$T_TMP/next4.txt"
step "next --json after space seed" u next --json >"$T_TMP/next4.json" 2>/dev/null
bc=$(jget .best.check <"$T_TMP/next4.json" 2>&1)
validates "next --json validates (best.check)" next "$T_TMP/next4.json"
check "next --json: best.check names replicate best ($bc)" sh -c "echo '$bc' | grep -q 'xloop replicate best'"

# a pending job whose recorded chain names its own job (issue 27: resume
# named q3's own job as the one it waits for): never "waits for itself"
step "a pending attempt chained onto its own job id" /usr/bin/python3 - "$d" "$long" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1] + "/.xloop/state.db")
rid = c.execute("SELECT id FROM run WHERE tag = ?", (sys.argv[2],)).fetchone()[0]
c.execute("INSERT INTO attempt (run_id, n, token, phase, job_id, log_path, intent_at,"
          " submitted_at, state, slurm_reason, after_job) VALUES (?, 1, 'tok-self', 'submitted',"
          " '159', '/nonexistent', 1, 1, 'PENDING', 'Dependency', '159')", (rid,))
c.commit()
PY
u resume >"$T_TMP/resume-self.txt" 2>&1
check "resume: a job is never said to wait for itself" sh -c "grep -q 'attempt 1: job 159 PENDING' '$T_TMP/resume-self.txt' && ! grep -A1 'attempt 1: job 159 PENDING' '$T_TMP/resume-self.txt' | grep -q 'waits for job 159' || { cat '$T_TMP/resume-self.txt'; exit 1; }"
u resume --json >"$T_TMP/resume-self.json" 2>/dev/null
check "resume --json: its waits_for names no job, and says why" sh -c "python3 -c 'import json,sys; l=[x for x in json.load(open(sys.argv[1]))[\"live\"] if x[\"job_id\"] == \"159\"][0][\"waits_for\"]; sys.exit(0 if l[\"job_id\"] is None and \"its own\" in l[\"text\"] else 1)' '$T_TMP/resume-self.json'"

finish
