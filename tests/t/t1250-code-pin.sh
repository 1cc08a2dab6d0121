#!/usr/bin/env bash
# The code a run executes is pinned (issue 27): each attempt records HEAD's
# commit and a hash of the tracked files' uncommitted changes when it is
# submitted (xloop's own files aside); a verdict whose code differs from its
# parent's says "the comparison is not one change: code changed since the
# parent", and one whose code is the same does not.
. "$(dirname "$0")/lib.sh"

# run once, in the plain profile: the pin is git and the DB, the same with accounting
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "the code a run executes" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" pin 'c["resources"].update(cpus=1, mem="200M", time="00:05:00")
c["queue"]["depth"] = 0'
# the code the job runs lives in the repository, as a project's train.py does
step "train.py" as_user sh -c "printf 'print(0.5)\n' >'$d/train.py'"
step "commit train.py" as_user git -C "$d" add train.py
step "commit train.py" as_user git -C "$d" commit -qm "train.py"
cat >"$T_TMP/job.sh" <<JOB
#!/bin/bash
set -u
LR=1
echo "START lr=\$LR"
python3 -c "import json; json.dump({'score': float(open('$d/train.py').read().split('(')[1].split(')')[0])}, open('\$XLOOP_RUN_DIR/cv.json', 'w'))"
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
step "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
idle() { [ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ]; }
drive() { local i; for i in $(seq 1 60); do u next >/dev/null 2>&1; idle && break; sleep 1; done; u next >/dev/null 2>&1; }
reason() { db "SELECT a.verdict || ': ' || a.verdict_reason FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = '$1' ORDER BY a.id DESC LIMIT 1"; }
run() { step "new $1" u new "$1" --from "$2" --set LR="$3" && step "submit $1" u submit "$1" && drive; }

run A base 2
check "A succeeded" sh -c "echo '$(reason A)' | grep -q '^success'"
check "its attempt pins the commit it ran (HEAD at submission) and no changes" \
	test "$(db "SELECT a.code_commit || '|' || a.code_changes FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'A'")" = "$(as_user git -C "$d" log --format=%H -1 -- runs/pin/A/job.sh)|"
check "A's parent was adopted (nothing pinned): its verdict says nothing of code" sh -c "! echo '$(reason A)' | grep -q 'not one change'"

# the same code: no word of it
run B A 3
check "B ran the same code as A: nothing said" sh -c "echo '$(reason B)' | grep -q '^success' && ! echo '$(reason B)' | grep -q 'not one change'"

# an edit of train.py that was not committed
step "edit train.py" as_user sh -c "printf 'print(0.75)\n' >'$d/train.py'"
run C B 4
check "C's attempt records a hash of the uncommitted change" sh -c "[ \"\$(/usr/bin/python3 -c \"import sqlite3; print(len(sqlite3.connect('$d/.xloop/state.db').execute(\\\"SELECT a.code_changes FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'C'\\\").fetchone()[0]))\")\" = 64 ]"
check "C's verdict says the comparison is not one change" sh -c "echo '$(reason C)' | grep -q 'the comparison is not one change: code changed since the parent (uncommitted changes to tracked files were made)' || { echo '$(reason C)'; exit 1; }"
check "and so does its decisions entry" grep -q 'C attempt 1: success' "$d/ops/decisions.md"

# the edit committed: another commit, the same code as C ran
step "commit train.py" as_user git -C "$d" commit -qam "train.py: 0.75"
run D C 5
check "D: C's edit committed (commit and changes both differ from C's pin): said" sh -c "echo '$(reason D)' | grep -q 'not one change: code changed since the parent (commit '"
step "edit train.py again" as_user sh -c "printf 'print(0.8)\n' >'$d/train.py' && git -C '$d' commit -qam 'train.py: 0.8'"
run E D 6
check "E: code committed since D: the commits are named" sh -c "echo '$(reason E)' | grep -Eq 'not one change: code changed since the parent \(commit [0-9a-f]{12}, then [0-9a-f]{12}\)'"
run F E 7
check "F: nothing changed since E: nothing said" sh -c "echo '$(reason F)' | grep -q '^success' && ! echo '$(reason F)' | grep -q 'not one change'"
finish
