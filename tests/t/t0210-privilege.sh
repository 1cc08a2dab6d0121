#!/usr/bin/env bash
# Least privilege: the private state stays private under umask 000, xloop
# never writes through a symbolic link (or a hard link) that leads out of
# the repository, a webhook URL from the environment ends up in no output
# and no file, and only src/lib/proc.c starts processes. Needs no Slurm: xloop
# runs with a PATH holding only bash.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
BIN=$T_TMP/bin F=$T_TMP/files OUT=$T_TMP/out
step "bin and files dirs" mkdir "$BIN" "$F"
step "bash on the PATH" ln -s "$(command -v bash)" "$BIN/bash"
printf '#!/bin/bash\nLR=0.1\necho "$LR" >"$XLOOP_RUN_DIR/out"\n' >"$F/job.sh"
echo '{"score": 0.5}' >"$F/cv.json"
step "files readable" chmod -R a+rX "$F"

# xl DIR ARGS...: xloop in DIR as the test user, umask 000, only bash on PATH
xl() {
	local d=$1
	shift
	as_user sh -c 'umask 000; exec "$@"' sh /usr/bin/env PATH="$BIN" "$X" -C "$d" "$@"
}
# repo: a git repository the test user owns
repo() {
	local d
	d=$(user_dir)
	step "git init" as_user git -C "$d" init -q -b main
	step "git config" as_user git -C "$d" config user.name "Test User"
	step "git config" as_user git -C "$d" config user.email test@example.com
	echo "$d"
}

# --- private state under umask 000 -------------------------------------------------------
d=$(repo)
check "init under umask 000" xl "$d" init --study p
check ".xloop is 0700 under umask 000" test "$(stat -c %a "$d/.xloop")" = 700
check "state.db is 0600 under umask 000" test "$(stat -c %a "$d/.xloop/state.db")" = 600
steps() {
	xl "$d" adopt "$F/job.sh" --tag base --cv "$F/cv.json" && xl "$d" new kid --from base --set LR=0.2 &&
		xl "$d" plan add LR=0.3 && xl "$d" plan rm 1 && xl "$d" decide "a decision" &&
		xl "$d" tick	# the plan is empty again: tick has nothing to submit
}
check "adopt, new, plan add/rm, decide, tick under umask 000" steps
check ".xloop/lock and tick.log are 0600" \
	test "$(stat -c %a "$d/.xloop/lock") $(stat -c %a "$d/.xloop/tick.log")" = "600 600"
check "nothing outside .git is writable by group or others" \
	test -z "$(find "$d" -path "$d/.git" -prune -o ! -type l -perm /022 -print)"
check "nothing in .xloop is readable by others" \
	test -z "$(find "$d/.xloop" -perm /077 -print)"

# --- never through a link out of the repository -------------------------------------------
O=$(user_dir)	# outside every study
echo precious >"$O/file"
chown "$XLOOP_TEST_USER" "$O/file" 2>/dev/null
step "the outside file writable" chmod 666 "$O/file"
# through RC NAME PATTERN ARGS...: xloop ARGS in $d exits RC, says PATTERN,
# and nothing outside changed
through() {
	local want=$1 name=$2 pat=$3 before rc
	shift 3
	before=$(tree_hash "$O")
	xl "$d" "$@" >"$OUT" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && { [ -z "$pat" ] || grep -qE "$pat" "$OUT"; } &&
		[ "$(tree_hash "$O")" = "$before" ]; then
		ok "$name"
	else
		not_ok "$name (exit $rc, want $want)" "$(cat "$OUT")"
	fi
}
lnk() { ln -s "$1" "$2" && chown -h "$XLOOP_TEST_USER" "$2" 2>/dev/null; true; }

lnk "$O" "$d/runs/p/evil"
through 65 "new: runs/<study>/<tag> a symlink out: refused" "already exists" new evil --from base --set LR=3
through 65 "adopt: runs/<study>/<tag> a symlink out: refused" "already exists" adopt "$F/job.sh" --tag evil
step "rm runs/p/evil" rm "$d/runs/p/evil"
step "move job.sh away" mv "$d/runs/p/base/job.sh" "$T_TMP/base.sh"
lnk "$O/file" "$d/runs/p/base/job.sh"
through 65 "new: the parent's job.sh a symlink out: refused" "symbolic link" new x --from base --set LR=3
step "job.sh back" rm "$d/runs/p/base/job.sh"
step "job.sh back" mv "$T_TMP/base.sh" "$d/runs/p/base/job.sh"
step "move decisions.md away" mv "$d/ops/decisions.md" "$T_TMP/decisions.md"
lnk "$O/file" "$d/ops/decisions.md"
through 1 "decide: ops/decisions.md a symlink out: refused" "symbolic link" decide "text"
step "rm the decisions.md link" rm "$d/ops/decisions.md"
step "decisions.md a hard link out" ln "$O/file" "$d/ops/decisions.md"
through 0 "decide: ops/decisions.md a hard link out: replaced, not written through" "" decide "text"
check "the hard-linked decisions.md is a file of its own now" \
	test "$(stat -c %h "$O/file")" = 1 -a "$(cat "$O/file")" = precious
step "decisions.md back" rm "$d/ops/decisions.md"
step "decisions.md back" mv "$T_TMP/decisions.md" "$d/ops/decisions.md"
step "ops a symlink out" mv "$d/ops" "$T_TMP/ops"
step "ops a symlink out" lnk "$O" "$d/ops"
through 1 "decide: ops/ a symlink out: refused" "not a directory" decide "text"
step "ops back" rm "$d/ops"
step "ops back" mv "$T_TMP/ops" "$d/ops"
step "tick.log a symlink out" mv "$d/.xloop/tick.log" "$T_TMP/tick.log"
step "tick.log a symlink out" lnk "$O/file" "$d/.xloop/tick.log"
through 0 "tick: .xloop/tick.log a symlink out: not written" "" tick
step "rm the tick.log link" rm "$d/.xloop/tick.log"
step "lock a symlink out" mv "$d/.xloop/lock" "$T_TMP/lock"
step "lock a symlink out" lnk "$O/file" "$d/.xloop/lock"
through 1 "plan: .xloop/lock a symlink out: refused" "lock.*symbolic links" plan ls
step "lock back" rm "$d/.xloop/lock"
step "lock back" mv "$T_TMP/lock" "$d/.xloop/lock"
step "a state.db outside" cp "$d/.xloop/state.db" "$O/state.db"
step "a state.db outside" chown "$XLOOP_TEST_USER" "$O/state.db"
step "state.db a symlink out" mv "$d/.xloop/state.db" "$T_TMP/state.db"
step "state.db a symlink out" lnk "$O/state.db" "$d/.xloop/state.db"
through 1 "status: .xloop/state.db a symlink out: refused" "state.db.*symbolic links" status base
step "state.db back" rm "$d/.xloop/state.db" "$O/state.db"
step "state.db back" mv "$T_TMP/state.db" "$d/.xloop/state.db"
step ".xloop a symlink out" mv "$d/.xloop" "$T_TMP/dotxloop"
step ".xloop a symlink out" lnk "$O" "$d/.xloop"
through 1 "status: .xloop a symlink out: refused" "not a directory" status base
step ".xloop back" rm "$d/.xloop"
step ".xloop back" mv "$T_TMP/dotxloop" "$d/.xloop"
check "the study still works" xl "$d" status base
d=$(repo)
step "init --study q" xl "$d" init --study q >/dev/null
lnk "$O" "$d/runs"
through 1 "adopt: runs/ a symlink out: refused" "not a directory" adopt "$F/job.sh" --tag base
step "runs/q a symlink out" rm "$d/runs"
step "runs/q a symlink out" mkdir "$d/runs"
step "runs/q a symlink out" chown "$XLOOP_TEST_USER" "$d/runs"
step "runs/q a symlink out" lnk "$O" "$d/runs/q"
through 1 "adopt: runs/<study> a symlink out: refused" "not a directory" adopt "$F/job.sh" --tag base
for f in AGENTS.md .gitignore xloop.json ops/decisions.md; do
	d=$(repo)
	[ "$f" = ops/decisions.md ] && mkdir "$d/ops" && chown "$XLOOP_TEST_USER" "$d/ops"
	lnk "$O/file" "$d/$f"
	want=1
	[ "$f" = xloop.json ] && want=78	# a config it cannot load
	through "$want" "init: $f a symlink out: refused" "symbolic link" init --study q
	check "init: $f a symlink: nothing written (no xloop.json, .xloop, AGENTS.md)" \
		sh -c "{ [ $f = xloop.json ] || [ ! -e '$d/xloop.json' ]; } && [ ! -e '$d/.xloop' ] &&
			{ [ $f = AGENTS.md ] || [ ! -e '$d/AGENTS.md' ]; }"
done
for f in ops .xloop; do
	d=$(repo)
	lnk "$O" "$d/$f"
	through 1 "init: $f a symlink out: refused" "not a directory" init --study q
	check "init: $f a symlink: nothing written" \
		sh -c "[ ! -e '$d/xloop.json' ] && [ ! -e '$d/AGENTS.md' ] && [ ! -e '$d/.gitignore' ]"
done

# --- the webhook URL stays a secret ----------------------------------------------------------
d=$(repo)
check "init for the webhook checks" xl "$d" init --study w
SECRET=s3cr3t$RANDOM$RANDOM
URL="http://user:pw$SECRET@127.0.0.1:1/hook/$SECRET"	# nothing listens on port 1
: >"$OUT"
wh() {
	as_user /usr/bin/env PATH="$BIN" XLOOP_NOTIFY_URL="$URL" NO_PROXY=127.0.0.1 \
		no_proxy=127.0.0.1 "$X" -C "$d" "$@" >>"$OUT" 2>&1
}
wh adopt "$F/job.sh" --tag base --cv "$F/cv.json"
wh notify queue failure "base attempt 1 failed" --tag base
wh notify flush
wh notify flush --json
wh tick
wh tick --json
wh notify test
wh doctor
wh doctor --json
wh cron-line
wh status
wh resume
wh resume --json
check "the webhook was tried (its failure is recorded)" sh -c "grep -q '127.0.0.1' '$OUT'"
check "the webhook URL is in no output" sh -c "! grep -q '$SECRET' '$OUT'"
check "the webhook URL is in no file of the study (DB, tick.log, git)" sh -c "! grep -rqa '$SECRET' '$d'"

# --- only src/lib/proc.c starts processes ------------------------------------------------------
spawn=$(grep -lE '\b(v?fork|exec[lv][pe]*|system|popen|posix_spawn[a-z]*|clone)\(' \
	-r --include='*.[ch]' "${XLOOP_ROOT_DIR:?}"/src | grep -vx "$XLOOP_ROOT_DIR/src/lib/proc.c")
check "only src/lib/proc.c spawns processes" test -z "$spawn"
check "src/lib/proc.c is where they are spawned (posix_spawnp)" \
	grep -q 'posix_spawnp(' "$XLOOP_ROOT_DIR/src/lib/proc.c"

finish
