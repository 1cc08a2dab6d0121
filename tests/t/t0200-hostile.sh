#!/usr/bin/env bash
# Hostile input, one table: tags, VAR=VALUE, job.sh and cv.json for adopt,
# xloop.json, -C and root, a read-only repository, a full disk. A refusal
# must exit with the documented code, say what is wrong on one
# "xloop: error:" line (exit 2: or a usage line), print nothing on stdout
# and leave the study as it was: every file (git's too), HEAD and every DB
# row. Needs no Slurm: xloop runs with a PATH holding only bash, so a case
# that got as far as Slurm would exit 69 ('squeue' not found) and fail.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
BIN=$T_TMP/bin F=$T_TMP/files OUT=$T_TMP/out ERR=$T_TMP/err
step "bin and files dirs" mkdir "$BIN" "$F"
step "bash on the PATH" ln -s "$(command -v bash)" "$BIN/bash"

# xloop as the test user with nothing but bash on PATH
xl() { as_user /usr/bin/env PATH="$BIN" "$X" "$@"; }

# snap DIR: a hash of the study's files (git's and the DB's among them)
snap() { tree_hash "$1"; }
# rows DIR: a hash of the study's DB, schema and rows
rows() { as_user sqlite3 "$1/.xloop/state.db" .dump 2>&1 | sha256sum; }

# one_error RC PATTERN: stderr is one short "xloop: error:" line matching
# PATTERN (grep -E), or for exit 2 "xloop CMD: ..." and a usage line
one_error() {
	local n
	n=$(wc -l <"$ERR")
	[ "$(wc -c <"$ERR")" -le 1200 ] || return 1
	if [ "$1" -eq 2 ] && [ "$n" -eq 2 ]; then
		head -n 1 "$ERR" | grep -qE "^xloop [a-z-]+: .*($2)" &&
			sed -n 2p "$ERR" | grep -q '^usage: xloop '
		return
	fi
	[ "$n" -eq 1 ] && grep -qE "^xloop: error: .*($2)" "$ERR"
}

# t RC NAME PATTERN ARGS...: `xloop -C $STUDY ARGS` exits RC with PATTERN
# on one error line, nothing on stdout, the study unchanged
t() {
	local want=$1 name=$2 pat=$3 before after rc why=""
	shift 3
	before=$(snap "$STUDY")
	xl -C "$STUDY" "$@" >"$OUT" 2>"$ERR"
	rc=$?
	after=$(snap "$STUDY")
	[ "$rc" -eq "$want" ] || why="exit $rc, want $want; "
	one_error "$want" "$pat" || why+="stderr is not one clear line saying '$pat'; "
	[ ! -s "$OUT" ] || why+="something on stdout; "
	[ "$before" = "$after" ] || why+="the study changed; "
	if [ -z "$why" ]; then ok "$name"; else not_ok "$name (${why%; })" "$(head -c 1500 "$ERR")"; fi
}

# a NAME ARGS...: accepted, exit 0 and nothing on stderr
a() {
	local name=$1
	shift
	xl -C "$STUDY" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	if [ "$RC" -eq 0 ] && [ ! -s "$ERR" ]; then ok "$name"; else not_ok "$name (exit $RC)" "$(cat "$ERR")"; fi
}

# the study: a proven root run and one child
S=$(user_dir)
new_study "$S" s 'pass'
STUDY=$S
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\nLR=0.1\nEPOCHS=3\necho "$LR $EPOCHS" >"$XLOOP_RUN_DIR/out"\n' >"$F/job.sh"
echo '{"score": 0.5}' >"$F/cv.json"
a "setup: adopt base" adopt "$F/job.sh" --tag base --cv "$F/cv.json"
a "setup: new kid" new kid --from base --set LR=0.2

# the hostile inputs
NL=$'a\nb' ESC=$'a\e[2Jb' BIG=$(head -c 120000 /dev/zero | tr '\0' a)	# BIG: argv allows 128 KiB
PW=$(user_dir)/pwned
step "a symlink job.sh" ln -s /etc/passwd "$F/passwd.sh"
step "an unreadable job.sh" cp "$F/job.sh" "$F/noread.sh"
step "an unreadable job.sh" chmod 000 "$F/noread.sh"
step "a 100 MB job.sh" truncate -s 100M "$F/huge.sh"
printf '#!/bin/bash\nLR=0.1\0\n' >"$F/nul.sh"
printf '#!/bin/bash\r\nLR=0.1\r\necho "$LR"\r\n' >"$F/crlf.sh"
printf '#!/bin/bash\nif then fi\n' >"$F/syntax.sh"
printf '#!/bin/bash\n# caf\xe9 in Latin-1\nLR=0.1\nNAME=\xe9t\xe9\n' >"$F/latin1.sh"
step "a FIFO job.sh" mkfifo "$F/fifo.sh"
step "a directory job.sh" mkdir "$F/dir.sh"
: >"$F/empty.json"
echo '{"score": NaN}' >"$F/nan.json"
echo '{"score": 1e400}' >"$F/inf.json"
echo '{"score": "0.9"}' >"$F/string.json"
step "a 50 MB cv.json" truncate -s 50M "$F/big.json"
step "a deep array cv.json" python3 -c 'print("[" * 10000 + "]" * 10000)' >"$F/deep.json"
step "a deep object cv.json" python3 -c 'print("{\"a\": " * 10000 + "1" + "}" * 10000)' >"$F/deepobj.json"
echo '[{"score": 0.5}]' >"$F/array.json"
echo '{"loss": 0.1}' >"$F/noscore.json"
step "a symlink cv.json" ln -s "$F/cv.json" "$F/link.json"
step "files readable, noread.sh not" chmod -R a+rX "$F"
step "files readable, noread.sh not" chmod 000 "$F/noread.sh"

# --- tags -------------------------------------------------------------------------------
t 2 "new: tag with .." "invalid tag" new ../x --from base --set LR=2
t 2 "new: tag with /" "invalid tag" new a/b --from base --set LR=2
t 2 "new: tag with a newline" "invalid tag 'a\\\\nb'" new "$NL" --from base --set LR=2
t 2 "new: tag with a terminal escape" "invalid tag 'a\\\\x1b\[2Jb'" new "$ESC" --from base --set LR=2
t 2 "new: a 120 KB tag" "invalid tag .*bytes left out" new "$BIG" --from base --set LR=2
t 2 "new: empty tag" "invalid tag ''" new "" --from base --set LR=2
t 2 "new: tag starting with -" "unknown option '-x'" new -x --from base --set LR=2
t 2 "new: tag starting with - after --" "invalid tag '-x'" new --from base --set LR=2 -- -x
t 2 "new: tag starting with ." "invalid tag '.x'" new .x --from base --set LR=2
t 66 "new: parent tag with .." "no run '../base'" new x --from ../base --set LR=2
t 2 "adopt --tag with .." "invalid tag" adopt "$F/job.sh" --tag ../x
t 2 "adopt --tag with a newline" "invalid tag 'a\\\\nb'" adopt "$F/job.sh" --tag "$NL"
t 2 "adopt --tag empty" "invalid tag ''" adopt "$F/job.sh" --tag ""
t 2 "adopt --tag .git" "invalid tag '.git'" adopt "$F/job.sh" --tag .git
t 2 "adopt --tag 120 KB" "invalid tag" adopt "$F/job.sh" --tag "$BIG"
t 66 "submit: tag with .." "no run '../x'" submit ../x
t 66 "submit: tag with a newline" "no run 'a\\\\nb'" submit "$NL"
t 66 "submit: empty tag" "no run ''" submit ""
t 2 "submit: bad --mem on a real run" "invalid --mem" submit kid --mem=-4G
t 2 "submit: bad --time on a real run" "invalid --time" submit kid --time '1;reboot'
t 2 "submit: bad --after on a real run" "invalid --after" submit kid --after '1,afterok:2'
t 66 "show: tag with /" "no run 'a/b'" show a/b
t 66 "show: a 120 KB tag" "no run .*bytes left out" show "$BIG"
t 2 "show: tag starting with -" "unknown option" show -x
t 66 "status: tag with .." "no run '../x'" status ../x
t 66 "status: tag with a control byte" "no run 'a\\\\x01b'" status $'a\x01b'
t 66 "diff: tag with .." "no run '../x'" diff ../x
t 66 "retry: tag with .." "no run '../x'" retry ../x
t 66 "retry: tag starting with ." "no run '.x'" retry .x
t 66 "cancel: tag with a newline" "no run 'a\\\\nb'" cancel "$NL"
t 66 "cancel: tag starting with - after --" "no run '-x'" cancel -- -x
t 65 "cancel: a run with no job" "no queued or running job" cancel kid
t 66 "mem: tag with .." "no run '../x'" mem ../x
t 66 "mem: a 120 KB tag" "no run" mem "$BIG"
t 66 "decide --run with .." "no run '../x'" decide "text" --run ../x
t 2 "sweep --name with .." "invalid sweep name" sweep --set LR=1,2 --name ../x
t 2 "sweep --name with a newline" "invalid sweep name 'a\\\\nb'" sweep --set LR=1,2 --name "$NL"
t 2 "sweep --name empty" "invalid sweep name ''" sweep --set LR=1,2 --name ""
t 66 "sweep show: unknown name" "no sweep '../x'" sweep show ../x
t 2 "next --tag with .." "invalid tag '../x'" next --set LR=5 --tag ../x
t 66 "next --from with .." "no run '../x'" next --set LR=5 --from ../x

# --- VAR=VALUE --------------------------------------------------------------------------
t 65 "new --set =VALUE" "no variable name" new x1 --from base --set =2
t 65 "new --set: name starts with a digit" "'1LR' is not a valid variable name" new x2 --from base --set 1LR=2
t 65 "new --set: name with a space" "'L R' is not a valid variable name" new x3 --from base --set 'L R=2'
t 65 "new --set: name with \$" "'L\\\$R' is not a valid variable name" new x4 --from base --set 'L$R=2'
t 65 "new --set: no =" "'LR' is not VAR=VALUE" new x5 --from base --set LR
t 65 "new --set: value not UTF-8" "not valid UTF-8" new x6 --from base --set $'LR=\xff'
t 65 "new --set: a name job.sh does not assign" "NOPE" new x7 --from base --set NOPE=1
t 65 "new --set: the value it has already" "" new x8 --from base --set LR=0.1
t 65 "new --note: not UTF-8" "not valid UTF-8" new x9 --from base --set LR=3 --note $'\xc3('
t 65 "plan add =VALUE" "no variable name" plan add =2
t 65 "plan add: name starts with a digit" "not a valid variable name" plan add 9LR=2
t 65 "plan add: all or nothing" "'L R' is not a valid variable name" plan add LR=3 'L R=2'
t 65 "plan add: value not UTF-8" "not valid UTF-8" plan add $'LR=\xfe'
t 65 "sweep --set =VALUES" "no variable name" sweep --set =1,2
t 65 "sweep --set: name with \$" "not a valid variable name" sweep --set 'L$R=1,2'
t 2 "sweep --set: an empty value" "empty value" sweep --set LR=1,,2
t 65 "next --set =VALUE" "no variable name" next --set =1
t 65 "next --set: name starts with a digit" "not a valid variable name" next --set 1LR=1
t 65 "next --set: name with a space" "not a valid variable name" next --set 'L R=1'
t 65 "decide: text not UTF-8" "UTF-8" decide $'caf\xe9'

# accepted, and harmless: the value is quoted so bash reads it literally
a "new --set with \$(touch ...) is accepted" new cmdsub --from base --set "LR=\$(touch $PW)"
a "new --set with a newline is accepted" new newline --from base --set $'LR=a\nb'
a "plan add with \$(touch ...) is accepted" plan add "EPOCHS=\$(touch $PW)" --from base
lit() { # lit TAG: the value bash reads from the run's LR= line, in a scratch copy
	grep '^LR=' "$S/runs/s/$1/job.sh" >"$T_TMP/lr.sh"
	bash -c '. "$1"; printf %s "$LR"' _ "$T_TMP/lr.sh"
}
check "the \$(...) value is stored literally" test "$(lit cmdsub)" = "\$(touch $PW)"
check "the newline value is stored literally" test "$(lit newline)" = "$NL"
check "the new job.sh differs from its parent in one line" \
	test "$(diff "$S/runs/s/base/job.sh" "$S/runs/s/newline/job.sh" | grep -c '^[<>]')" -eq 2
step "plan ls --json" xl -C "$S" plan ls --json >"$OUT" 2>&1
check "the plan keeps the value literally" grep -qF "\$(touch $PW)" "$OUT"
check "nothing ran the command substitution" test ! -e "$PW"

# --- job.sh for adopt -------------------------------------------------------------------
t 65 "adopt: job.sh is a symlink to /etc/passwd" "symbolic link" adopt "$F/passwd.sh" --tag j-passwd
t 65 "adopt: job.sh unreadable (mode 000)" "Permission denied" adopt "$F/noread.sh" --tag j-noread
t 65 "adopt: job.sh of 100 MB" "too large" adopt "$F/huge.sh" --tag j-huge
t 65 "adopt: job.sh with a NUL byte" "NUL byte" adopt "$F/nul.sh" --tag j-nul
t 65 "adopt: job.sh with CRLF line ends (sbatch refuses them)" "CRLF, first on line 1" adopt "$F/crlf.sh" --tag j-crlf
t 65 "adopt: job.sh that fails bash -n" "bash -n" adopt "$F/syntax.sh" --tag j-syntax
t 65 "adopt: job.sh is a directory" "not a regular file" adopt "$F/dir.sh" --tag j-dir
t 65 "adopt: job.sh is a FIFO (no hang)" "not a regular file" adopt "$F/fifo.sh" --tag j-fifo
t 65 "adopt: job.sh is /dev/zero" "not a regular file" adopt /dev/zero --tag j-zero
t 66 "adopt: job.sh missing" "No such file" adopt "$F/missing.sh" --tag j-missing
# bytes that are not UTF-8 are a script's own business: copied byte for byte
a "adopt: job.sh with Latin-1 bytes is accepted" adopt "$F/latin1.sh" --tag latin1
check "the Latin-1 job.sh is copied byte for byte" cmp "$F/latin1.sh" "$S/runs/s/latin1/job.sh"
a "new from it: the non-UTF-8 old value is fine" new latin1-b --from latin1 --force --set NAME=b
step "show latin1-b --json" xl -C "$S" show latin1-b --json >"$OUT" 2>&1
check "show --json lists that run and its parent" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [r["tag"] for r in d["lineage"]] == ["latin1-b", "latin1"], d' "$OUT"

# --- cv.json for adopt --cv -------------------------------------------------------------
t 65 "adopt --cv: empty" "not valid JSON" adopt "$F/job.sh" --tag c-empty --cv "$F/empty.json"
t 65 "adopt --cv: score NaN" "not valid JSON" adopt "$F/job.sh" --tag c-nan --cv "$F/nan.json"
t 65 "adopt --cv: score 1e400" "overflow" adopt "$F/job.sh" --tag c-inf --cv "$F/inf.json"
t 65 "adopt --cv: a string score" "finite number" adopt "$F/job.sh" --tag c-string --cv "$F/string.json"
t 65 "adopt --cv: 50 MB" "too large" adopt "$F/job.sh" --tag c-big --cv "$F/big.json"
t 65 "adopt --cv: 10000-deep arrays" "depth" adopt "$F/job.sh" --tag c-deep --cv "$F/deep.json"
t 65 "adopt --cv: 10000-deep objects" "depth" adopt "$F/job.sh" --tag c-deepobj --cv "$F/deepobj.json"
t 65 "adopt --cv: not an object" "JSON object" adopt "$F/job.sh" --tag c-array --cv "$F/array.json"
t 65 "adopt --cv: no score" "no \"score\"" adopt "$F/job.sh" --tag c-noscore --cv "$F/noscore.json"
t 65 "adopt --cv: a symlink" "symbolic link" adopt "$F/job.sh" --tag c-link --cv "$F/link.json"
t 66 "adopt --cv: missing" "No such file" adopt "$F/job.sh" --tag c-missing --cv "$F/missing.json"

# --- xloop.json: every command that loads it refuses a bad one (78) -------------------
C=$(user_dir)
new_study "$C" c 'pass'
step "keep the good xloop.json" cp "$C/xloop.json" "$T_TMP/good.json"
# tj NAME PATTERN TEXT [ARGS...]: xloop.json holds TEXT; ARGS (default: status) exit 78
tj() {
	local name=$1 pat=$2
	printf '%s' "$3" >"$C/xloop.json"
	shift 3
	STUDY=$C t 78 "xloop.json: $name" "$pat" "${@:-status}"
}
tj "unknown key" "unknown key 'colour'" '{"study": "c", "colour": "blue"}'
tj "unknown key in a section" "unknown key 'slurm.nodes'" '{"study": "c", "slurm": {"nodes": 2}}'
tj "wrong type" "'queue.depth' must be" '{"study": "c", "queue": {"depth": "1"}}' next
tj "negative memory" "'resources.mem' must be" '{"study": "c", "resources": {"mem": "-4G"}}' adopt "$F/job.sh" --tag j
tj "garbage memory" "'resources.mem' must be" '{"study": "c", "resources": {"mem": "lots"}}' new x --from base --set LR=2
tj "bad time" "'resources.time' must be" '{"study": "c", "resources": {"time": "4h"}}' tick
tj "study name with /" "'study' must be" '{"study": "a/b"}'
tj "study name .." "'study' must be" '{"study": ".."}' plan add LR=1
tj "partition with a newline" "'slurm.partition' must be" '{"study": "c", "slurm": {"partition": "gpu\nx"}}'
tj "a NUL in a string" "invalid JSON" '{"study": "c\u0000x"}'
tj "duplicate key" "duplicate" '{"study": "c", "study": "d"}'
tj "not JSON" "invalid JSON" 'study = c'
tj "empty file" "invalid JSON" ''
tj "not an object" "top level must be an object" '["c"]'
step "xloop.json a symlink" rm "$C/xloop.json"
step "xloop.json a symlink" ln -s "$T_TMP/good.json" "$C/xloop.json"
STUDY=$C t 78 "xloop.json: a symlink" "symbolic link" status
step "xloop.json a directory" rm "$C/xloop.json"
step "xloop.json a directory" mkdir "$C/xloop.json"
STUDY=$C t 78 "xloop.json: a directory" "not a regular file" status
step "xloop.json of 2 MB" rmdir "$C/xloop.json"
step "xloop.json of 2 MB" truncate -s 2M "$C/xloop.json"
STUDY=$C t 78 "xloop.json: 2 MB" "too large" status
step "the good xloop.json back" cp "$T_TMP/good.json" "$C/xloop.json"

# --- global -----------------------------------------------------------------------------
t 66 "-C a missing directory" "cannot use directory '$T_TMP/nope'" -C "$T_TMP/nope" status base
t 66 "-C a file (inside a study)" "Not a directory" -C "$S/xloop.json" status base
t 66 "-C empty" "cannot use directory ''" -C "" status base
if [ "$(id -u)" -eq 0 ]; then
	h1=$(snap "$S")
	PATH=$BIN "$X" -C "$S" new r --from base --set LR=9 >"$OUT" 2>"$ERR"
	rc=$?
	if [ "$rc" -eq 77 ] && one_error 77 "refusing to run 'new' as root" && [ "$(snap "$S")" = "$h1" ]; then
		ok "root without --allow-root: exit 77, nothing changed"
	else
		not_ok "root without --allow-root: exit 77, nothing changed (exit $rc)" "$(cat "$ERR")"
	fi
else
	skip "root refusal" "not root"
fi

# --- a repository the user cannot write -----------------------------------------------
R=$(user_dir)
new_study "$R" r 'pass'
STUDY=$R a "plan ls (the first locked command makes .xloop/lock)" plan ls
step "repository read-only" chmod 555 "$R"
STUDY=$R t 1 "adopt into a read-only repository" "unable to create directory.*Permission denied" adopt "$F/job.sh" --tag base
step "repository writable" chmod 755 "$R"
STUDY=$R a "adopt once it is writable" adopt "$F/job.sh" --tag base --cv "$F/cv.json"
step "runs/r and ops read-only" chmod 555 "$R/runs/r" "$R/ops"
STUDY=$R t 1 "new in a read-only runs/<study>" "unable to create '.*runs/r/x': Permission denied" new x --from base --set LR=2
STUDY=$R t 1 "decide with a read-only ops/" "Permission denied" decide "text"
step "runs/r and ops writable" chmod 755 "$R/runs/r" "$R/ops"

# --- a full disk ------------------------------------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	skip "a full disk" "not root (mounts a tmpfs)"
	finish
	exit
fi
M=$T_TMP/full
HOLD=$(user_dir)
step "mount point" mkdir "$M"
if ! mount -t tmpfs -o size=4M,mode=0755 tmpfs "$M" || ! mountpoint -q "$M"; then
	skip "a full disk" "cannot mount a tmpfs"
	finish
	exit
fi
step "mount point owned by the user" chown "$XLOOP_TEST_USER" "$M"
trap '[ -s "$HOLD/pid" ] && kill "$(cat "$HOLD/pid")" 2>/dev/null; umount "$M"
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
new_study "$M" d 'pass'
STUDY=$M a "full disk: setup adopt" adopt "$F/job.sh" --tag base --cv "$F/cv.json"
rows=$(rows "$M")
# a reader keeps the DB open so its shared memory stays allocated: xloop can
# open the DB on the full disk and gets as far as writing files
as_user /usr/bin/python3 -c 'import os, signal, sqlite3, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))	# closes the DB
c = sqlite3.connect(sys.argv[1])
c.execute("SELECT count(*) FROM run").fetchall()
open(sys.argv[2], "w").write(str(os.getpid()))
time.sleep(300)' "$M/.xloop/state.db" "$HOLD/pid" &
for _ in $(seq 100); do [ -s "$HOLD/pid" ] && break; sleep 0.1; done
step "the filler directory" mkdir "$M/fill"
step "the filler directory" chown "$XLOOP_TEST_USER" "$M/fill"
as_user fallocate -l "$(df -B1 --output=avail "$M" | tail -n 1)" "$M/fill/a" 2>/dev/null
as_user dd if=/dev/zero of="$M/fill/b" bs=1k 2>/dev/null
check "full disk: no space left" test "$(df -B1 --output=avail "$M" | tail -n 1)" -eq 0
# disk_state: every file but the filler and the DB's own (its rows are
# compared once there is space again) and HEAD; not the size of directories
# (tmpfs counts their entries, and sqlite's -wal and -shm come and go)
disk_state() {
	(cd "$M" && find . \( -path ./fill -o -name 'state.db*' \) -prune -o -printf '%p %m %y\n' |
		LC_ALL=C sort && find . \( -path ./fill -o -name 'state.db*' \) -prune -o -type f \
		-print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum
	as_user git -C "$M" rev-parse HEAD
}
# full NAME ARGS...: exit 1, only error lines, one naming the full disk
full() {
	local name=$1 before rc
	shift
	before=$(disk_state)
	xl -C "$M" "$@" >"$OUT" 2>"$ERR"
	rc=$?
	if [ "$rc" -eq 1 ] && [ ! -s "$OUT" ] && ! grep -qv '^xloop: error: ' "$ERR" &&
		grep -qE 'No space left on device|disk is full' "$ERR" &&
		[ "$(disk_state)" = "$before" ]; then
		ok "full disk: $name fails cleanly"
	else
		not_ok "full disk: $name fails cleanly (exit $rc)" "$(cat "$OUT" "$ERR")"
	fi
}
full "new" new x --from base --set LR=2
full "adopt" adopt "$F/job.sh" --tag b2 --cv "$F/cv.json"
full "plan add" plan add LR=3
full "decide" decide "text"
check "full disk: no run directory or temporary file left" \
	test "$(cd "$M/runs/d" && echo *)" = base -a -z "$(find "$M" -name '*.tmp-*')"
kill "$(cat "$HOLD/pid")" && : >"$HOLD/pid"
wait
as_user dd if=/dev/zero of="$M/fill/c" bs=1k 2>/dev/null	# what the reader's files held
# without the reader the DB itself cannot be opened: said so, nothing written
full "new, the DB not openable" new x --from base --set LR=2
step "remove the filler" rm -rf "$M/fill"
check "full disk: the DB passes integrity_check" test "$(as_user /usr/bin/python3 -c 'import sqlite3, sys
print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$M/.xloop/state.db")" = ok
check "full disk: the DB has the rows it had before" test "$(rows "$M")" = "$rows"
STUDY=$M a "full disk: with space again, new works" new x --from base --set LR=2

finish
