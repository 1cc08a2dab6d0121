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
as_user sh -c "printf '#!/bin/bash\nLR=0.1\necho \"START lr=\$LR\"\n' >'$d/train.sh'
echo '{\"score\": 0.5}' >'$d/cv0.json'"
elsewhere=$(user_dir)
expect_rc 0 "-C DIR adopt PATH reads PATH in DIR" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' adopt train.sh --tag base --cv cv0.json"
check "the adopted job.sh is DIR's train.sh" cmp "$d/train.sh" "$d/runs/fh/base/job.sh"
expect_rc 0 "-C DIR report --out F writes F in DIR" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' report --out r1.html"
check "report landed in DIR" test -s "$d/r1.html"
check "and not in the cwd" test ! -e "$elsewhere/r1.html"
as_user mkdir -p "$d/sub"
expect_rc 0 "-C A -C B is A/B, as in git" \
	as_user sh -c "cd '$elsewhere' && '$X' -C '$d' -C sub report --out r2.html"
check "report landed in DIR/sub" test -s "$d/sub/r2.html"
expect_rc 66 "-C a missing directory" as_user "$X" -C "$T_TMP/nope" status
as_user rm -f "$d/r1.html" "$d/sub/r2.html"

finish
