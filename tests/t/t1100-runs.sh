#!/usr/bin/env bash
# adopt -> new x2 -> submit both on the real cluster: one change per run,
# one commit per job.sh, attempt-numbered logs, the second chained afterany
# on the first, status from one squeue call, preflight refusals.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
S=${XLOOP_ROOT_DIR:?}/schemas
V="/usr/bin/python3 $(dirname "$0")/validate.py"
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

step "git init -q -b main" as_user git -C "$d" init -q -b main
step "git config user.name Test User" as_user git -C "$d" config user.name "Test User"
step "git config user.email test@example.com" as_user git -C "$d" config user.email test@example.com
step "init --study dino" u init --study dino >/dev/null
# a study sized for the test cluster (2 CPUs, one GRES gpu)
set_config() {
	/usr/bin/python3 - "$d/xloop.json" "$@" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    sec, key = k.split(".")
    c[sec][key] = json.loads(v)
c.setdefault("driver", {})["mode"] = "none"  # counts jobs: no feeders
json.dump(c, open(p, "w"), indent=2)
PY
}
step "set_config resources.cpus=1 resources.mem=200M resources.tim" set_config resources.cpus=1 'resources.mem="200M"' 'resources.time="00:05:00"'
# the user has work of their own staged: xloop must leave it alone
echo "my notes" >"$d/notes.txt"
chown "$XLOOP_TEST_USER" "$d/notes.txt" 2>/dev/null
step "git add notes.txt" as_user git -C "$d" add notes.txt

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --job-name=ignored
set -euo pipefail
LR=0.01
export EPOCHS=2
echo "START lr=$LR epochs=$EPOCHS device=cpu tag=$XLOOP_TAG attempt=$XLOOP_ATTEMPT"
#GATE
printf '{"score": %s}\n' "$EPOCHS" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"
# every job waits for the test's word (open_gate), so the chain is checked
# while both jobs are surely live, however busy the machine
step "gate_job job.sh" gate_job "$T_TMP/job.sh"
printf '{"score": 0.5}\n' >"$T_TMP/cv.json"

expect_rc 0 "adopt a proven baseline" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
check "adopted job.sh is byte for byte" cmp "$T_TMP/job.sh" "$d/runs/dino/base/job.sh"
check "adopted job.sh is executable" test -x "$d/runs/dino/base/job.sh"
expect_rc 0 "new lr-0.1 from base" u new lr-0.1 --from base --set LR=0.1 --note "faster"
expect_rc 0 "new ep-3 from best" u new ep-3 --from best --set EPOCHS=3
check "lr-0.1 differs from base in exactly the LR line" sh -c \
	"diff '$d/runs/dino/base/job.sh' '$d/runs/dino/lr-0.1/job.sh' | grep -c '^[<>]' | grep -qx 2 &&
	 grep -qx 'LR=0.1' '$d/runs/dino/lr-0.1/job.sh'"
check "diff shows the one change" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' diff ep-3 | grep -qx '+export EPOCHS=3'"
check "show gives the lineage" sh -c "runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' show ep-3 | grep -q 'EPOCHS: 2 -> 3'"
runuser -u "$XLOOP_TEST_USER" -- "$X" -C "$d" show lr-0.1 --json >"$T_TMP/show.json"
validates "show --json validates" show "$T_TMP/show.json"

# refusals change nothing
h=$(tree_hash "$d")
expect_rc 2 "a tag with a slash" u new a/b --from base --set LR=1
expect_rc 2 "a tag with .." u new .. --from base --set LR=1
expect_rc 65 "an existing tag" u new ep-3 --from base --set LR=1
expect_rc 65 "a variable the script does not assign" u new x1 --from base --set NOPE=1
expect_rc 65 "an unchanged value" u new x2 --from base --set LR=0.01
expect_rc 65 "VAR=VALUE without a name" u new x3 --from base --set =1
expect_rc 65 "a parent that is not proven" u new x4 --from lr-0.1 --set LR=0.2
expect_rc 66 "an unknown parent" u new x5 --from nosuch --set LR=0.2
check "refusals changed no file" test "$h" = "$(tree_hash "$d")"

# git: one commit per job.sh, nothing else, the user's staging intact
check "init's commit and three commits, one per job.sh" test "$(as_user git -C "$d" rev-list --count HEAD)" = 4
files=$(for c in $(as_user git -C "$d" rev-list HEAD~3..HEAD); do
	as_user git -C "$d" show --name-only --format= "$c"; done | sort | tr '\n' ' ')
check "each commit holds exactly one job.sh (the proven baseline's with its cv.json)" test "$files" = \
	"runs/dino/base/cv.json runs/dino/base/job.sh runs/dino/ep-3/job.sh runs/dino/lr-0.1/job.sh "
check "the user's staged file is still staged, not committed" test \
	"$(as_user git -C "$d" diff --cached --name-only)" = notes.txt

# submit both: the second is chained afterany on the first
expect_rc 0 "submit lr-0.1" u submit lr-0.1
expect_rc 0 "submit ep-3" u submit ep-3
j1=$(u status lr-0.1 --json | jget '.runs[0].attempts[0].job_id')
j2=$(u status ep-3 --json | jget '.runs[0].attempts[0].job_id')
check "both have job ids" sh -c "[ -n '$j1' ] && [ -n '$j2' ] && [ '$j1' != '$j2' ]"
dep=$(as_user scontrol show job -o "$j2" | grep -o 'Dependency=[^ ]*')
check "the second waits on the first (afterany)" sh -c "echo '$dep' | grep -q 'afterany:$j1'"
runuser -u "$XLOOP_TEST_USER" -- env SLURM_CONF="${SLURM_CONF:-}" "$X" -C "$d" status --json >"$T_TMP/status.json"
validates "status --json validates" status "$T_TMP/status.json"
check "status lists both as live" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' status >'$T_TMP/st.txt' &&
	 grep -Eq '^ *lr-0.1 .*(PENDING|RUNNING)' '$T_TMP/st.txt' && grep -Eq '^ *ep-3 .*PENDING' '$T_TMP/st.txt'"
# the second must not start while the first is held at its gate
pending2() { as_user squeue -h -j "$j2" -o %T | grep -qx PENDING; }
check "the second still waits while the first runs" pending2
step "open lr-0.1's gate" open_gate lr-0.1.1
step "open ep-3's gate" open_gate ep-3.1
state2() { as_user scontrol show job -o "$j2" | grep -q 'JobState=COMPLETED'; }
check "the second completed" wait_for 180 state2
e1=$(as_user scontrol show job -o "$j1" | grep -o 'EndTime=[^ ]*' | cut -d= -f2)
s2=$(as_user scontrol show job -o "$j2" | grep -o 'StartTime=[^ ]*' | cut -d= -f2)
check "the second started after the first ended ($e1 <= $s2)" sh -c "[ \$(date -d '$e1' +%s) -le \$(date -d '$s2' +%s) ]"
check "logs are attempt1.out" sh -c "[ -f '$d/runs/dino/lr-0.1/slurm/attempt1.out' ] && [ -f '$d/runs/dino/ep-3/slurm/attempt1.out' ]"
check "the job saw its tag and attempt" grep -q 'tag=ep-3 attempt=1' "$d/runs/dino/ep-3/slurm/attempt1.out"
check "the job wrote cv.json into its own run dir" grep -q '"score": 3' "$d/runs/dino/ep-3/cv.json"

# every --json output validates against its schema
step "adopt job.sh --tag base2 --json" u adopt "$T_TMP/job.sh" --tag base2 --json >"$T_TMP/adopt.json"
validates "adopt --json validates" adopt "$T_TMP/adopt.json"
step "new ep-4 --from base2 --force" u new ep-4 --from base2 --force --set EPOCHS=4 --json >"$T_TMP/new.json"
validates "new --json validates" new "$T_TMP/new.json"
step "submit ep-4 --no-chain --json" u submit ep-4 --no-chain --json >"$T_TMP/submit.json"
validates "submit --json validates" submit "$T_TMP/submit.json"

# a second attempt gets attempt2.out, the first log is kept
expect_rc 0 "resubmit lr-0.1 without a chain" u submit lr-0.1 --no-chain
check "attempt 2 has its own log path" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- '$X' -C '$d' status lr-0.1 --json | grep -q 'slurm/attempt2.out'"
check "attempt 1's log is still there" test -s "$d/runs/dino/lr-0.1/slurm/attempt1.out"

# preflight refusals: nothing reaches sbatch
before=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i | wc -l)
expect_rc 65 "--time over the partition's MaxTime is refused" u submit ep-3 --time 5:00:00
check "the refusal explains MaxTime" sh -c \
	"runuser -u '$XLOOP_TEST_USER' -- env SLURM_CONF='${SLURM_CONF:-}' '$X' -C '$d' submit ep-3 --time 5:00:00 2>&1 | grep -q 'MaxTime=04:00:00'"
expect_rc 65 "--mem over the node's memory is refused" u submit ep-3 --mem 64T
expect_rc 2 "an invalid --mem" u submit ep-3 --mem lots
expect_rc 66 "an unknown tag" u submit nosuch
step "set_config resources.cpus=64" set_config resources.cpus=64
expect_rc 78 "more CPUs than any node has is refused" u submit ep-3
step "set_config resources.cpus=1" set_config resources.cpus=1
step "chmod 644 job.sh" chmod 644 "$d/runs/dino/ep-3/job.sh"
expect_rc 65 "a job.sh that is not executable" u submit ep-3
step "chmod 755 job.sh" chmod 755 "$d/runs/dino/ep-3/job.sh"
after=$(as_user squeue -h -u "$XLOOP_TEST_USER" -o %i | wc -l)
check "no refused submission reached Slurm" test "$before" = "$after"

finish
