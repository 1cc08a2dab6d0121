#!/usr/bin/env bash
# Run tags and the plan on the real cluster: `plan add` refuses at once what
# feeding would refuse later (unknown VAR, unchanged value in any spelling,
# made already, in the plan already: the same configuration by any path,
# which new and next --set refuse too), all or nothing; bare `plan` lists,
# `plan ls --all` shows removed entries; an entry from best that became
# invalid is skipped with a line in the briefing, not an error; the same
# change from two parents is VAR-VALUE and VAR-VALUE--n2 (never a bare -2);
# `sweep --name N` tags its runs N--VAR-VALUE; without a best, an entry from
# best waits; a study whose space's longest tag would not fit with whole
# names abbreviates a variable in every tag (issue 44).
. "$(dirname "$0")/lib.sh"

# run once, in the plain profile: tags and the plan live in the DB, the same with accounting
if [ "$XLOOP_PROFILE" = accounting ]; then
	skip "run tags and the plan" "run once, without accounting"
	finish
	exit
fi

X=$XLOOP_BIN
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" pt 'c["resources"].update(cpus=1, mem="200M", time="00:02:00")
c["queue"]["depth"] = 1'

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
set -u
LR=0.05
SEED=1
MAX_DEPTH=3
echo "START lr=$LR seed=$SEED depth=$MAX_DEPTH device=cpu"
python3 -c "import json; json.dump({'score': 0.5}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
echo FINISHED
JOB
step "sed SEED=2 job.sh" sed 's/^SEED=1$/SEED=2/' "$T_TMP/job.sh" >"$T_TMP/better.sh"
step "sed SEED=3 job.sh" sed 's/^SEED=1$/SEED=3/' "$T_TMP/job.sh" >"$T_TMP/job2.sh"
step "sed MAX_DEPTH=4 job.sh" sed 's/^LR=0.05$/LR=0.2/; s/^MAX_DEPTH=3$/MAX_DEPTH=4/' "$T_TMP/job.sh" >"$T_TMP/other.sh"
echo '{"score": 0.4}' >"$T_TMP/cv.json"
echo '{"score": 0.3}' >"$T_TMP/cv2.json"
echo '{"score": 0.9}' >"$T_TMP/cv-better.json"
echo '{"score": 0.1}' >"$T_TMP/cv-other.json"
step "chmod 644 *.sh *.json" chmod 644 "$T_TMP"/*.sh "$T_TMP"/*.json
expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "adopt a second proven root" u adopt "$T_TMP/job2.sh" --tag base2 --cv "$T_TMP/cv2.json"

# --- plan add refuses what `new` or feeding would refuse later
plan_rows() { db "SELECT count(*) FROM plan"; }
expect_rc 65 "an unknown variable is refused" u plan add NOPE=1
expect_rc 65 "the parent's own value is refused" u plan add LR=0.05
expect_rc 65 "in another spelling too (5e-2)" u plan add LR=5e-2
expect_rc 65 "and with a trailing zero (0.050)" u plan add LR=0.050 --from base
expect_rc 0 "a real change is queued" u plan add LR=0.1
expect_rc 65 "the same entry again is refused" u plan add LR=0.10
expect_rc 65 "also when named by the tag best stands for" u plan add LR=0.1 --from base
check "it says it is in the plan already" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan add LR=0.1 2>&1 | grep -q 'in the plan already'"
expect_rc 65 "a change given twice in one call is refused" u plan add MAX_DEPTH=2 MAX_DEPTH=2.0 --from base
expect_rc 0 "the same change from another parent is fine" u new lr2 --from base --set LR=0.2
expect_rc 65 "a change made already from that parent is refused" u plan add LR=0.2 --from base
check "it names the run that has it" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan add LR=2e-1 --from base 2>&1 | grep -q 'made already: run lr2'"
check "refusals added nothing (all or nothing)" test "$(plan_rows)" = 1

# --- "run or queued already" is the same CONFIGURATION, from any parent
# other is base with LR=0.2 and MAX_DEPTH=4: MAX_DEPTH=3 from it is lr2's
expect_rc 0 "adopt a third root (LR=0.2 MAX_DEPTH=4)" u adopt "$T_TMP/other.sh" --tag other --cv "$T_TMP/cv-other.json"
expect_rc 65 "plan add refuses another path to a configuration run already" u plan add MAX_DEPTH=3 --from other
check "it names the run that has that configuration" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan add MAX_DEPTH=3.0 --from other 2>&1 | grep -q 'made already: run lr2 has that configuration'"
expect_rc 65 "new refuses it too" u new md3 --from other --set MAX_DEPTH=3
expect_rc 65 "and next --set" u next --set MAX_DEPTH=3 --from other
check "nothing was made" test "$(db "SELECT count(*) FROM run WHERE tag IN ('md3', 'MAX_DEPTH-3')")" = 0
expect_rc 0 "plan LR=0.05 from other (base with MAX_DEPTH=4)" u plan add LR=0.05 --from other
expect_rc 65 "base with MAX_DEPTH=4 is in the plan already by another path" u plan add MAX_DEPTH=4 --from base
check "it names the plan entry" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan add MAX_DEPTH=4 --from base 2>&1 | grep -q 'in the plan already: entry [0-9]* (LR=0.05 from other)'"
expect_rc 65 "new refuses what the plan will make" u new md4 --from base --set MAX_DEPTH=4
expect_rc 0 "new --force makes it anyway" u new md4 --from base --set MAX_DEPTH=4 --force
step "plan rm id FROM plan" u plan rm "$(db "SELECT id FROM plan WHERE parent = 'other'")" >/dev/null

# --- bare plan lists; plan ls --all shows removed entries
out=$(u plan 2>&1)
check "bare 'xloop plan' lists the plan" grep -q 'LR=0.1  from best' <<<"$out"
id=$(db "SELECT id FROM plan WHERE value = '0.1'")
expect_rc 0 "remove the entry" u plan rm "$id"
check "plan ls hides it" sh -c "! runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan ls | grep -q 'LR=0.1'"
check "plan ls --all shows it as removed" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan ls --all | grep -q 'LR=0.1 .*\[removed\]'"
check "plan ls --all --json has it" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' --json plan ls --all | grep -q '\"status\": \"removed\"'"

# --- an entry from best that is no change any more by the time it is fed
expect_rc 0 "plan SEED=2 from best (base now)" u plan add SEED=2
expect_rc 0 "plan MAX_DEPTH=2 from base" u plan add MAX_DEPTH=2 --from base
expect_rc 0 "plan MAX_DEPTH=2 from base2" u plan add MAX_DEPTH=2 --from base2
expect_rc 0 "a better root with SEED=2 becomes best" u adopt "$T_TMP/better.sh" --tag better --cv "$T_TMP/cv-better.json"
u next >"$T_TMP/next.txt" 2>"$T_TMP/next.err"
check "next succeeds although an entry became invalid" test $? = 0
check "the briefing says the entry was skipped and why" grep -q "SEED=2 from best) skipped: SEED is 2 in better's job.sh already" "$T_TMP/next.txt"
check "the entry is marked skipped" test "$(db "SELECT status FROM plan WHERE var = 'SEED'")" = skipped
check "plan ls --all shows the skip and its reason" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' plan ls --all | grep -q 'SEED=2 .*\[skipped\].*already'"

# --- tags: the same change from two parents, never a bare -2
tags=$(db "SELECT r.tag FROM plan p JOIN run r ON r.id = p.run_id WHERE p.var = 'MAX_DEPTH' ORDER BY p.id")
check "the first is MAX_DEPTH-2, the second MAX_DEPTH-2--n2" test "$(echo $tags)" = "MAX_DEPTH-2 MAX_DEPTH-2--n2"
check "no tag ends in a bare -N after a value" test -z "$(db "SELECT tag FROM run WHERE tag GLOB '*-2-[0-9]'")"
for i in $(seq 1 60); do
	u next >/dev/null 2>&1
	[ -z "$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
expect_rc 0 "a sweep with --name" u sweep --name lrs --set LR=0.3,0.4 --from base
check "its runs are tagged N--VAR-VALUE" test "$(echo $(db "SELECT tag FROM run WHERE tag LIKE 'lrs%' ORDER BY id"))" = "lrs--LR-0.3 lrs--LR-0.4"
expect_rc 0 "a sweep without --name" u sweep --set LR=0.5 --from base2
check "its run is VAR-VALUE" test "$(db "SELECT count(*) FROM run WHERE tag = 'LR-0.5'")" = 1
# --- while there is no best yet, an entry from best waits (not skipped)
e=$(user_dir)
new_study "$e" nb 'c["resources"].update(cpus=1, mem="200M", time="00:02:00")'
expect_rc 0 "a study whose baseline is not proven yet" as_user "$X" -C "$e" adopt "$T_TMP/job.sh" --tag base
expect_rc 0 "plan a change from best" as_user "$X" -C "$e" plan add LR=0.2
as_user "$X" -C "$e" next >/dev/null 2>&1
check "next leaves it queued until there is a best" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$e' plan ls | grep -q 'LR=0.2  from best'"

# --- issue 44: a variable has one name in every tag of a study. Its space's
# longest configuration tag does not fit with whole names, so the study
# abbreviates, in a plan entry's VAR-VALUE tag as in autopilot's, and keeps it
f=$(user_dir)
w() { as_user "$X" -C "$f" "$@"; }
new_study "$f" ab 'c["resources"].update(cpus=1, mem="200M", time="00:02:00")'
cat >"$T_TMP/long.sh" <<'JOB'
#!/bin/bash
WEIGHT_DECAY=0.0001
HIDDEN=256
BATCH_SIZE=64
EPOCHS=50
LEARNING_RATE=0.001
echo "START device=cpu"
python3 -c "import json; json.dump({'score': 0.5}, open('$XLOOP_RUN_DIR/cv.json', 'w'))"
JOB
step "chmod 644 long.sh" chmod 644 "$T_TMP/long.sh"
step "adopt the five-variable baseline" w adopt "$T_TMP/long.sh" --tag base --cv "$T_TMP/cv.json"
for sp in WEIGHT_DECAY=0.00001,0.0001,0.001 HIDDEN=128,256,512 BATCH_SIZE=32,64,128,256 \
	EPOCHS=10,50,100 LEARNING_RATE=0.0001,0.0003,0.001,0.003; do
	step "space set ${sp%%=*}" w space set "$sp"
done
step "plan WEIGHT_DECAY=0.00001 from base" w plan add WEIGHT_DECAY=0.00001 --from base
w next >/dev/null 2>&1
check "the plan's change is tagged with the study's name of the variable (WD)" \
	test "$(sql "$f/.xloop/state.db" "SELECT group_concat(tag, ' ') FROM run WHERE tag <> 'base'")" = WD-0.00001
check "the study decided once to abbreviate, and kept it" \
	test "$(sql "$f/.xloop/state.db" "SELECT value FROM kv WHERE key = 'tag_names:ab'")" = 2

out=$("$X" help tags 2>&1)
check "help tags documents the change again" grep -q 'VAR-VALUE--n2' <<<"$out"
check "and the replicate" grep -q 'B--r2' <<<"$out"
check "and the named sweep" grep -q 'N--VAR-VALUE' <<<"$out"
finish
