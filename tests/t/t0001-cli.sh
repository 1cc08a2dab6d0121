#!/usr/bin/env bash
# The command line: version, help, usage errors, exit codes, init, the
# static binary. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN

check "version names every library" \
	sh -c "'$X' --version | grep -E '^xloop [0-9].*sqlite 3\..*libgit2 1\..*jansson 2\..*libcurl [0-9]'"
check "version --json has the libraries" \
	sh -c "'$X' version --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert set(d[\"libraries\"])=={\"sqlite\",\"libgit2\",\"jansson\",\"libcurl\"}'"
check "help lists init" sh -c "'$X' help | grep -q '^  init '"
missing=$(for e in $(grep -ho '^const struct cmd_entry cmd_[a-z_]*_entry' "${XLOOP_ROOT_DIR:?}"/src/cmd/*.c | awk '{print $4}'); do
	grep -q "&$e," "$XLOOP_ROOT_DIR/src/cmd/cmd.c" || echo "$e"; done)
check "every command file's entry is in the table" test -z "$missing"
check "help hides test commands" sh -c "! '$X' help | grep -q test-parse"
check "help init shows its usage" sh -c "'$X' help init | grep -q '^usage: xloop init \[--study S\]'"
check "init --help equals help init" sh -c "[ \"\$('$X' init --help)\" = \"\$('$X' help init)\" ]"
expect_rc 2 "no command is a usage error" "$X"
expect_rc 2 "unknown command is a usage error" "$X" frobnicate
check "unknown command is named" sh -c "'$X' frobnicate 2>&1 | grep -q \"unknown command 'frobnicate'\""
expect_rc 2 "unknown global option" "$X" --frob help
expect_rc 2 "unknown command option" as_user "$X" init --frob
check "unknown option is named" sh -c "'$X' version --frob 2>&1 | grep -q \"unknown option '--frob'\""
expect_rc 2 "option without its value" as_user "$X" init --study
expect_rc 2 "extra argument" "$X" version extra
expect_rc 2 "help for an unknown command" "$X" help frobnicate

# init, as the unprivileged user
d=$(user_dir)
expect_rc 0 "init creates a study" as_user "$X" -C "$d" init --study dino --partition short
for f in xloop.json .xloop/state.db ops/decisions.md AGENTS.md .gitignore; do
	check "init created $f" test -e "$d/$f"
done
check ".xloop is 0700" sh -c "[ \$(stat -c %a '$d/.xloop') = 700 ]"
check "state.db is 0600" sh -c "[ \$(stat -c %a '$d/.xloop/state.db') = 600 ]"
check "config has the study and partition" sh -c \
	"python3 -c 'import json; c=json.load(open(\"$d/xloop.json\")); assert c[\"study\"]==\"dino\" and c[\"slurm\"][\"partition\"]==\"short\"'"
check ".gitignore ignores .xloop/" grep -qx '.xloop/' "$d/.gitignore"
check "AGENTS.md has the xloop section" grep -q 'xloop:begin' "$d/AGENTS.md"
h1=$(tree_hash "$d")
check "init again says nothing to do" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' init | grep -q 'already initialised'"
h2=$(tree_hash "$d")
check "init again changes no file" test "$h1" = "$h2"
expect_rc 78 "init with a different study is refused" as_user "$X" -C "$d" init --study other
h3=$(tree_hash "$d")
check "refused init changes no file" test "$h1" = "$h3"
check "init --json reports nothing created" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' init --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"created\"]==[] and d[\"study\"]==\"dino\"'"

# an existing AGENTS.md and .gitignore are kept, our parts added once
d2=$(user_dir)
printf '# Project rules\nBe nice.\n' >"$d2/AGENTS.md"
printf 'node_modules' >"$d2/.gitignore"
chown -R "$XLOOP_TEST_USER" "$d2" 2>/dev/null
as_user "$X" -C "$d2" init >/dev/null 2>&1
check "AGENTS.md keeps the user's text" grep -q '^Be nice.$' "$d2/AGENTS.md"
check "AGENTS.md section added once" sh -c "[ \$(grep -c 'xloop:begin' '$d2/AGENTS.md') = 1 ]"
check ".gitignore keeps the user's line" sh -c "grep -qx node_modules '$d2/.gitignore' && grep -qx '.xloop/' '$d2/.gitignore'"

# bad input: clear error, nothing written
d3=$(user_dir)
expect_rc 2 "invalid study name" as_user "$X" -C "$d3" init --study ../x
check "invalid study name wrote nothing" sh -c "[ -z \"\$(ls -A '$d3')\" ]"
printf '{"study": "s", "resources": {"mem": "-4G"}}\n' >"$d3/xloop.json"
chown "$XLOOP_TEST_USER" "$d3/xloop.json" 2>/dev/null
expect_rc 78 "negative memory in xloop.json" as_user "$X" -C "$d3" init
check "bad config names the key" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d3' init 2>&1 | grep -q \"'resources.mem'\""
printf '{"study": "s", "colour": "blue"}\n' >"$d3/xloop.json"
expect_rc 78 "unknown key in xloop.json" as_user "$X" -C "$d3" init
printf '{"study": "s", "queue": {"depth": "1"}}\n' >"$d3/xloop.json"
expect_rc 78 "wrong type in xloop.json" as_user "$X" -C "$d3" init
printf '{"study": "s",' >"$d3/xloop.json"
expect_rc 78 "truncated xloop.json" as_user "$X" -C "$d3" init
check "bad configs wrote nothing else" sh -c "[ \"\$(ls -A '$d3')\" = xloop.json ]"
expect_rc 66 "init in a missing directory" as_user "$X" -C "$T_TMP/nope" init
check "missing directory is named" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$T_TMP/nope' init 2>&1 | grep -q nope"

if [ "$(id -u)" -eq 0 ]; then
	d4=$(mktemp -d "$T_TMP/root-XXXXXX")
	expect_rc 77 "init refuses root" "$X" -C "$d4" init
	check "refusal as root wrote nothing" sh -c "[ -z \"\$(ls -A '$d4')\" ]"
	expect_rc 0 "init as root with --allow-root" "$X" -C "$d4" init --allow-root
else
	skip "root refusal" "not root"
fi

# usage and options are made from each command's table (cmd/opts.h): every
# option of every command, subcommands and hidden ones too, has its text
all=$("$X" help --all)
check "help --all lists the options" sh -c "printf '%s\n' \"\$1\" | grep -q '^init	--study S	'" _ "$all"
check "help --all lists subcommands' options" sh -c "printf '%s\n' \"\$1\" | grep -q '^plan add	--from P|best	'" _ "$all"
check "help --all lists hidden commands' options" sh -c "printf '%s\n' \"\$1\" | grep -q '^test-parse	--format F	'" _ "$all"
untold=$(printf '%s\n' "$all" | awk -F'\t' 'NF < 3 || $3 == ""')
check "every option has a help text" test -z "$untold"
[ -z "$untold" ] || printf '    %s\n' "$untold"
check "options once parsed but not in help are there" sh -c "printf '%s\n' \"\$1\" | grep -q '^notify queue	--tag T' &&
	printf '%s\n' \"\$1\" | grep -q '^tick	--feeder-job ID' && printf '%s\n' \"\$1\" | grep -q '^sweep	--no-chain'" _ "$all"
# and what help names is what the parser takes: init with every option it lists
d5=$(user_dir)
set -- $(printf '%s\n' "$all" | awk -F'\t' '$1 == "init" { split($2, w, " "); print w[1], (w[2] == "S" ? "s5" : w[2] == "max|min" ? "max" : "p5") }')
expect_rc 0 "init takes every option its help names ($*)" as_user "$X" -C "$d5" init "$@"
check "help plan shows every subcommand's usage" sh -c "'$X' help plan | grep -q '^usage: xloop plan ls \[--all\]' &&
	'$X' help plan | grep -q '^   or: xloop plan add \[--from P|best\] VAR=VALUE...' && '$X' help plan | grep -q '^Options:'"
check "plan add --help equals help plan add" sh -c "[ \"\$('$X' plan add --help)\" = \"\$('$X' help plan add)\" ]"
check "plan add --help is the subcommand's" sh -c "'$X' plan add --help | grep -q '^usage: xloop plan add '"
expect_rc 2 "help for an unknown subcommand" "$X" help plan frob
check "a subcommand's usage error names the command" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan rm 2>&1 |
	grep -q \"^xloop plan: missing argument\" &&
	runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan rm 2>&1 | grep -q '^usage: xloop plan rm ID'"
expect_rc 2 "an unknown subcommand is a usage error" as_user "$X" -C "$d" plan frob
check "an option of another subcommand is refused" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan rm 1 --all 2>&1 | grep -q \"unknown option '--all'\""

# the shipped binary is fully static and runs with nothing around it
if [ "$X" = "${XLOOP_ROOT_DIR:-}/xloop" ]; then
	check "file says statically linked" sh -c "file '$X' | grep -q 'statically linked'"
	check "ldd says not dynamic" sh -c "ldd '$X' 2>&1 | grep -q 'not a dynamic executable'"
	if [ "$(id -u)" -eq 0 ]; then
		c=$(mktemp -d "$T_TMP/chroot-XXXXXX")
		cp "$X" "$c/xloop"
		check "runs in an empty chroot" sh -c "chroot '$c' /xloop --version | grep -q '^xloop '"
	else
		skip "empty chroot" "not root"
	fi
else
	skip "static checks" "not the shipped binary"
fi

finish
