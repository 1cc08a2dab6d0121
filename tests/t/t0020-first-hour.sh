#!/usr/bin/env bash
# What a new user and a new agent trip on in the first hour (issue 16):
# -C DIR and relative paths, the #SBATCH rule, the output contract, what
# init writes and commits, what is in git after a study. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
d=$(user_dir)
new_study "$d" fh ''
as_user git -C "$d" add -A >/dev/null 2>&1
as_user git -C "$d" commit -qm setup >/dev/null 2>&1

# 1. -C DIR: paths given after it are relative to DIR, as in git
step "train.sh, cv0.json" as_user sh -c "printf '#!/bin/bash\nLR=0.1\necho \"START lr=\$LR\"\n' >'$d/train.sh'
echo '{\"score\": 0.5}' >'$d/cv0.json'"
elsewhere=$(user_dir)
expect_rc 0 "-C DIR adopt PATH reads PATH in DIR" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' adopt train.sh --tag base --cv cv0.json"
check "the adopted job.sh is DIR's train.sh" cmp "$d/train.sh" "$d/runs/fh/base/job.sh"
expect_rc 0 "-C DIR report --out F writes F in DIR" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' report --out r1.html"
check "report landed in DIR" test -s "$d/r1.html"
check "and not in the cwd" test ! -e "$elsewhere/r1.html"
step "mkdir -p ..." as_user mkdir -p "$d/sub"
expect_rc 0 "-C A -C B is A/B, as in git" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' -C sub report --out r2.html"
check "report landed in DIR/sub" test -s "$d/sub/r2.html"
expect_rc 66 "-C a missing directory" as_user "$X" -C "$T_TMP/nope" status
step "rm -f ... ..." as_user rm -f "$d/r1.html" "$d/sub/r2.html"

# 3. #SBATCH lines against xloop.json: one rule, said by adopt and help submit
check "help submit states the rule" sh -c "'$X' help submit | grep -q 'command line win over #SBATCH lines'"
step "sb.sh" as_user sh -c "printf '#!/bin/bash\n#SBATCH --time=08:00:00\n#SBATCH -c 4 --mem 16384M\n#SBATCH --partition=gpu  # same as xloop.json\n#SBATCH --constraint=a100\n#SBATCH -e err.txt\nLR=0.1\n#SBATCH --time=1:00:00\necho START\n' >'$d/sb.sh'"
step "resources in xloop.json" as_user python3 -c "import json; p='$d/xloop.json'; c=json.load(open(p)); c['resources'].update(cpus=2, time='02:00:00'); json.dump(c, open(p, 'w'))"
step "adopt sb" as_user "$X" -C "$d" adopt sb.sh --tag sb --json >"$T_TMP/sb.json" 2>"$T_TMP/sb.err"
check "adopt names the differing --time and what Slurm gets" grep -q "line 2: '#SBATCH --time=08:00:00' differs from what xloop passes: Slurm gets --time=02:00:00 (resources.time in xloop.json" "$T_TMP/sb.err"
check "and -c 4 (cpus)" grep -q "line 3: '#SBATCH -c 4' differs from what xloop passes: Slurm gets --cpus-per-task=2" "$T_TMP/sb.err"
check "an equal --mem in other units is no warning" sh -c "! grep -q 'mem 16384M' '$T_TMP/sb.err'"
check "an equal partition is no warning" sh -c "! grep -q 'partition=gpu' '$T_TMP/sb.err'"
check "an option xloop does not pass is no warning" sh -c "! grep -q constraint '$T_TMP/sb.err'"
check "--error is named: it takes stderr out of the log" grep -q "line 6: '#SBATCH -e err.txt' sends stderr away" "$T_TMP/sb.err"
check "a #SBATCH after the first command is not read" sh -c "! grep -q 'line 8' '$T_TMP/sb.err'"
check "the rule is stated once" sh -c "[ \$(grep -c 'the rule: ' '$T_TMP/sb.err') = 1 ]"
check "adopt --json lists them" sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/sb.json\")); assert [x[\"line\"] for x in d[\"sbatch_lines\"]]==[2,3,6], d'"
check "adopt --json validates" sh -c "/usr/bin/python3 '$(dirname "$0")/validate.py' '${XLOOP_ROOT_DIR:?}/schemas/adopt.schema.json' <'$T_TMP/sb.json'"
step "adopt quiet" as_user "$X" -C "$d" adopt train.sh --tag quiet >"$T_TMP/quiet.out" 2>&1
check "a job.sh without #SBATCH lines: no warning" sh -c "! grep -q warning '$T_TMP/quiet.out'"

# 4. the output contract where people look; the score's key is metric.name
for c in adopt judge; do
	check "help $c says the job writes \$XLOOP_RUN_DIR/cv.json" sh -c "'$X' help $c | grep -q 'XLOOP_RUN_DIR/cv.json'"
	check "help $c says the key is metric.name" sh -c "'$X' help $c | grep -q 'metric.name'"
done
d4=$(user_dir)
step "git init -q -b main" as_user git -C "$d4" init -q -b main
step "init --study acc" as_user "$X" -C "$d4" init --study acc >"$T_TMP/init4.out" 2>&1
check "init's output states the contract" grep -q 'writes "$XLOOP_RUN_DIR/cv.json" with its score under the key "score"' "$T_TMP/init4.out"
step "metric accuracy" as_user sed -i 's/"name": "score"/"name": "accuracy"/' "$d4/xloop.json"
step "cv.json" as_user sh -c "echo '{\"accuracy\": 0.91, \"loss\": 0.3}' >'$d4/cv.json'"
expect_rc 0 "a cv.json with the metric.name key proves an adopted run" \
	as_user "$X" -C "$d4" adopt "$d/train.sh" --tag base --cv "$d4/cv.json"
check "its score is the accuracy" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d4' status --json | grep -q '0.91'"
step "cv2.json" as_user sh -c "echo '{\"loss\": 0.3}' >'$d4/cv2.json'"
expect_rc 65 "a cv.json without the key is refused" \
	as_user "$X" -C "$d4" adopt "$d/train.sh" --tag b2 --cv "$d4/cv2.json"
check "and the message names the key" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d4' adopt '$d/train.sh' --tag b2 --cv '$d4/cv2.json' 2>&1 | grep -q 'neither \"accuracy\"'"

# 2. init commits what it created in one commit, the user's staging left alone;
# without Slurm it warns and keeps the defaults, and runs doctor's checks
d2=$(user_dir)
g2() { as_user git -C "$d2" "$@"; }
step "g2 init -q -b main" g2 init -q -b main
step "g2 config user.name Test User" g2 config user.name "Test User"
step "g2 config user.email test@example.com" g2 config user.email test@example.com
step "AGENTS.md, .gitignore" as_user sh -c "printf '# Rules\nBe nice.\n' >'$d2/AGENTS.md'; printf 'node_modules/\n' >'$d2/.gitignore'"
step "g2 add AGENTS.md .gitignore" g2 add AGENTS.md .gitignore
step "g2 commit -qm the user's files" g2 commit -qm "the user's files"
step "edits of the user" as_user sh -c "echo 'Be kind too.' >>'$d2/AGENTS.md'; echo notes >'$d2/notes.txt'"
step "g2 add notes.txt" g2 add notes.txt
step "init --json without Slurm" as_user env PATH=/nonexistent "$X" -C "$d2" init --json >"$T_TMP/init2.json" 2>"$T_TMP/init2.err"
check "init --json validates" sh -c "/usr/bin/python3 '$(dirname "$0")/validate.py' '${XLOOP_ROOT_DIR:?}/schemas/init.schema.json' <'$T_TMP/init2.json'"
check "without Slurm: a warning that the defaults stay and doctor --fix fits them" \
	grep -q 'Slurm does not answer here.*keeps the defaults.*xloop doctor --fix' "$T_TMP/init2.err"
check "one commit on top of the user's" test "$(g2 rev-list --count HEAD)" = 2
check "it holds xloop.json, ops/decisions.md and .gitignore (its edit of a clean file)" test \
	"$(g2 show --name-only --format= HEAD | sort | tr '\n' ' ')" = ".gitignore ops/decisions.md xloop.json "
check "AGENTS.md had the user's uncommitted edit: not committed" \
	sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/init2.json\")); assert d[\"not_committed\"]==[\"AGENTS.md\"] and d[\"slurm\"] is False, d'"
check "the user's staged file is still staged, and only it" test "$(g2 diff --cached --name-only)" = notes.txt
check "the user's edit of AGENTS.md is still in the work tree" grep -q 'Be kind too.' "$d2/AGENTS.md"
check "doctor's checks came with it" sh -c "python3 -c 'import json; d=json.load(open(\"$T_TMP/init2.json\")); assert [c[\"name\"] for c in d[\"doctor\"]][:2]==[\"config\",\"controller\"], d'"
d3=$(user_dir)
step "git init -q -b main" as_user git -C "$d3" init -q -b main
step "AGENTS.md" as_user sh -c "printf 'x\n' >'$d3/AGENTS.md'"
step "init without Slurm" as_user env PATH=/nonexistent "$X" -C "$d3" init >"$T_TMP/init3.out" 2>&1
check "init's text says what it committed" grep -q 'committed xloop.json, ops/decisions.md, .gitignore as [0-9a-f]' "$T_TMP/init3.out"
check "and what it did not commit" grep -q 'not committed: AGENTS.md had edits of yours' "$T_TMP/init3.out"
check "and prints doctor's checks" grep -q '^  ok    config ' "$T_TMP/init3.out"

# 12. what is in git: .gitignore covers the logs and the report; adopt --cv
# commits the cv.json with the job.sh
for p in .xloop/state.db runs/fh/base/slurm/attempt1.out runs/fh/base/slurm/attempt1.mem report.html; do
	check "init's .gitignore ignores $p" sh -c "runuser -u '$XLOOP_TEST_USER' -- git -C '$d2' check-ignore -q '$p'"
done
check "it does not ignore a run's cv.json or job.sh" sh -c "! runuser -u '$XLOOP_TEST_USER' -- git -C '$d2' check-ignore -q runs/fh/base/cv.json && ! runuser -u '$XLOOP_TEST_USER' -- git -C '$d2' check-ignore -q runs/fh/base/job.sh"
check "adopt --cv commits cv.json with job.sh" test \
	"$(as_user git -C "$d" show --name-only --format= "$(as_user git -C "$d" log --format=%H --grep '^xloop: adopt fh/base' | head -n1)" | sort | tr '\n' ' ')" = "runs/fh/base/cv.json runs/fh/base/job.sh "
step "report" as_user "$X" -C "$d" report >/dev/null 2>&1
check "report writes report.html at the study root" test -s "$d/report.html"
check "after adopt, new and report, git status shows nothing of xloop's" \
	test -z "$(as_user git -C "$d" status --porcelain --untracked-files=all | grep -v -e ' train.sh$' -e ' cv0.json$' -e ' cv2.json$' -e ' sb.sh$' -e ' xloop.json$')"

finish
