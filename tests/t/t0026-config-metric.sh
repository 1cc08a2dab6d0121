#!/usr/bin/env bash
# The metric's name without editing xloop.json by hand (issue 27): `init
# --metric NAME --goal min` writes metric.name and metric.goal; `config
# set KEY VALUE` sets one key, checked as xloop.json is when it loads (a
# bad key or value exits 65 and changes nothing), committed with an
# ops/decisions.md entry; `config get KEY` prints it, and the default in
# force of a key the file does not set, said so (issue 44). Needs no Slurm.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
d=$(user_dir)
: >"$T_TMP/no-slurm.conf"
chmod 644 "$T_TMP/no-slurm.conf"
u() { as_user env SLURM_CONF="$T_TMP/no-slurm.conf" "$X" -C "$d" "$@"; }
step "git init" as_user git -C "$d" init -q -b main
step "git config" as_user git -C "$d" config user.name "Test User"
step "git config" as_user git -C "$d" config user.email test@example.com
expect_rc 2 "init --goal takes max or min" u init --goal up
expect_rc 2 "init --metric takes a name" u init --metric 'a b'
check "and wrote nothing" test ! -e "$d/xloop.json"
u init --metric accuracy --goal min >"$T_TMP/init.txt" 2>&1
check "init --metric accuracy --goal min" sh -c "python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))[\"metric\"]; sys.exit(0 if m[\"name\"] == \"accuracy\" and m[\"goal\"] == \"min\" else 1)' '$d/xloop.json' || cat '$T_TMP/init.txt'"
check "init says the score's key and goal" grep -q 'under the key "accuracy" (metric.name in xloop.json; goal min)' "$T_TMP/init.txt"
expect_rc 78 "init on a study with another metric refuses" u init --metric f1
check "and names config set" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='$T_TMP/no-slurm.conf' '$X' -C '$d' init --metric f1 2>&1 | grep -q 'xloop config set metric.name'"
expect_rc 0 "init again with the same metric is fine" u init --metric accuracy

check "config get metric.name" test "$(u config get metric.name)" = '"accuracy"'
before=$(as_user git -C "$d" rev-parse HEAD)
expect_rc 0 "config set metric.name f1" u config set metric.name f1
check "xloop.json has it" test "$(u config get metric.name)" = '"f1"'
check "committed with a decisions entry" sh -c "as_user() { runuser -u '$XLOOP_TEST_USER' -- \"\$@\"; }; [ \"\$(git -C '$d' rev-parse HEAD~1 2>/dev/null || runuser -u '$XLOOP_TEST_USER' -- git -C '$d' rev-parse HEAD~1)\" = '$before' ] && grep -q 'xloop.json changed: metric.name = \"f1\"' '$d/ops/decisions.md'"
check "the tree is clean" test -z "$(as_user git -C "$d" status --porcelain)"
expect_rc 0 "config set metric.goal max" u config set metric.goal max
expect_rc 0 "an integer key takes a number" u config set resources.cpus 2
check "stored as a number" test "$(u config get resources.cpus)" = 2
sum=$(sha256sum "$d/xloop.json" "$d/ops/decisions.md")
head=$(as_user git -C "$d" rev-parse HEAD)
expect_rc 65 "a bad value is refused" u config set resources.cpus zero
expect_rc 65 "a bad goal is refused" u config set metric.goal sideways
expect_rc 65 "an unknown key is refused" u config set nope.x 1
expect_rc 65 "a key without a section is refused" u config set cpus 2
expect_rc 65 "search.* is space's" u config set search.seed SEED
expect_rc 65 "the study's name is fixed" u config set study other
expect_rc 65 "config get of an unknown key" u config get nope.x
# issue 44: every key of the table, with the default in force when the file has none
check "config get metric.min_delta: the default, said so" test "$(u config get metric.min_delta)" = '0.0 (default)'
check "config get search.alpha: the default, said so" test "$(u config get search.alpha)" = '0.05 (default)'
check "--json: the value only" test "$(u --json config get search.alpha)" = '0.05'
check "a key the file sets has no note" test "$(u config get resources.cpus)" = 2
check "an unknown key of a section: its keys named" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='$T_TMP/no-slurm.conf' '$X' -C '$d' config get metric.delta 2>&1 | grep -q 'the keys: metric.name, metric.goal, metric.min_delta'"
check "xloop.json, decisions and HEAD unchanged" sh -c "[ \"\$(sha256sum '$d/xloop.json' '$d/ops/decisions.md')\" = '$sum' ] && [ \"\$(runuser -u '$XLOOP_TEST_USER' -- git -C '$d' rev-parse HEAD 2>/dev/null || git -C '$d' rev-parse HEAD)\" = '$head' ]"
check "the error names the key and what it takes" sh -c "runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='$T_TMP/no-slurm.conf' '$X' -C '$d' config set resources.cpus zero 2>&1 | grep -q \"'resources.cpus' must be an integer\""
check "help lists config" sh -c "'$X' help | grep -q '^  config '"
finish
