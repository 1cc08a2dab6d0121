#!/usr/bin/env bash
# Slurm limits are back-pressure, not failures (issue 18). With a QOS of
# MaxSubmitJobsPerUser=3 given to the test user (accounting profile only):
# sbatch's real refusal names QOSMaxSubmitJobPerUserLimit; a hand-run
# `submit` over the limit exits 75 naming it and uses up no attempt
# number and no log; a loop that wants more jobs than the limit allows
# (depth 2 beside one job of the user's own) is held back, never gets a
# failure verdict from the limit, never has more than 3 jobs submitted,
# and ends with every run judged a success on its first attempt. A
# sweep's array over the limit is held back the same way: exit 75, no
# attempt (no submit_failed), and `sweep retry` submits it later.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != accounting ]; then
	skip "QOS submit limit" "needs accounting"
	finish
	exit
fi
if ! scontrol show config | grep -q '^AccountingStorageEnforce *= *.*limits'; then
	skip "QOS submit limit" "the cluster was brought up without AccountingStorageEnforce=limits"
	finish
	exit
fi
X=$XLOOP_BIN
Q=xlooplim3
cleanup() {
	scancel -u "$XLOOP_TEST_USER" >/dev/null 2>&1
	sacctmgr -i modify user where name="$XLOOP_TEST_USER" set qos-="$Q" >/dev/null 2>&1
	sacctmgr -i delete qos "$Q" >/dev/null 2>&1
}
cleanup
check "a QOS with MaxSubmitJobsPerUser=3" sacctmgr -i add qos "$Q" MaxSubmitJobsPerUser=3
check "given to the test user" sacctmgr -i modify user where name="$XLOOP_TEST_USER" set qos+="$Q"
trap 'cleanup; rm -rf "$T_TMP"' EXIT

d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" lim "c['resources'].update(cpus=1, mem='100M', time='00:10:00')
c['slurm']['qos'] = '$Q'
c['queue']['depth'] = 2"
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
echo "START x=$X device=cpu"
sleep 2
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"

# the user's own jobs, outside xloop, fill the limit
hold() { as_user sbatch --parsable -p gpu --qos="$Q" -c 1 --mem=50M -o /dev/null --wrap "sleep $1"; }
for _ in 1 2 3; do hold 300 >/dev/null; done
err=$(hold 300 2>&1)
printf '%s\n' "$err" >"$T_TMP/sbatch-refusal.txt"
check "sbatch's own refusal names QOSMaxSubmitJobPerUserLimit" grep -q QOSMaxSubmitJobPerUserLimit "$T_TMP/sbatch-refusal.txt"
# XLOOP_CAPTURE_OUT=DIR saves what sacctmgr and sbatch said (ops/slurm/captures)
if [ -n "${XLOOP_CAPTURE_OUT:-}" ]; then
	af=format=User,Account,Partition,QOS,MaxJobs,MaxSubmit,GrpTRES,MaxTRES
	qf=format=Name,MaxJobsPU,MaxSubmitPU,MaxTRESPU,GrpTRES,GrpJobs,GrpSubmit
	{ echo "# command: sacctmgr --parsable2 show assoc where user=$XLOOP_TEST_USER $af"
	  as_user sacctmgr --parsable2 show assoc where user="$XLOOP_TEST_USER" "$af"; } \
		>"$XLOOP_CAPTURE_OUT/sacctmgr_P_assoc_user.txt"
	{ echo "# command: sacctmgr --parsable2 show qos $qf"
	  as_user sacctmgr --parsable2 show qos "$qf"; } >"$XLOOP_CAPTURE_OUT/sacctmgr_P_qos.txt"
	{ echo "# command: sbatch --parsable -p gpu --qos=$Q ... (a 4th job over MaxSubmitJobsPerUser=3; stderr)"
	  cat "$T_TMP/sbatch-refusal.txt"; } >"$XLOOP_CAPTURE_OUT/sbatch_refused_qos_max_submit.txt"
fi

expect_rc 0 "a run" u new r1 --from base --set X=1
out=$(u submit r1 --no-chain 2>&1)
rc=$?
check "submit over the limit exits 75 (got $rc)" test "$rc" -eq 75
check "and names the limit" sh -c "printf '%s' \"\$1\" | grep -q QOSMaxSubmitJobPerUserLimit" _ "$out"
check "no attempt was recorded" python3 -c 'import json,sys; sys.exit(len(json.loads(sys.argv[1])["runs"][0]["attempts"]))' "$(u status r1 --json)"
check "no log was made" test ! -e "$d/runs/lim/r1/slurm/attempt1.out"
# a sweep's array over the limit: back-pressure too (issue 27), not submit_failed
out=$(u sweep --name sw --set X=8,9 --from base --no-chain 2>&1)
rc=$?
check "a sweep over the limit exits 75 (got $rc)" test "$rc" -eq 75
check "and names the limit and sweep retry" sh -c "printf '%s' \"\$1\" | grep -q 'QOSMaxSubmitJobPerUserLimit.*sweep retry sw'" _ "$out"
check "no sweep task has an attempt (none submit_failed)" test -z "$(as_user sqlite3 "$d/.xloop/state.db" "SELECT a.id FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag LIKE 'sw--%'")"
check "nor a segment row left behind" test -z "$(as_user sqlite3 "$d/.xloop/state.db" "SELECT s.id FROM segment s LEFT JOIN attempt a ON a.id = s.attempt_id WHERE a.id IS NULL")"
scancel -u "$XLOOP_TEST_USER"
sleep 2
expect_rc 0 "once there is room, sweep retry submits both tasks" u sweep retry sw --no-chain
check "as attempt 1 each" python3 -c 'import json,sys
runs = [r for r in json.loads(sys.argv[1])["runs"] if r["tag"].startswith("sw--")]
sys.exit(0 if len(runs) == 2 and all([a["n"] for a in r["attempts"]] == [1] for r in runs) else str(runs))' "$(u status --json)"
for _ in $(seq 1 60); do
	[ -z "$(squeue -h -u "$XLOOP_TEST_USER" -o %i)" ] && break
	sleep 1
done
expect_rc 0 "a tick judges them" u tick

# the loop: depth 2 wants 3 jobs, one of the user's own holds a place
# until a tick said the limit held a run back and the briefing was read
# (a barrier: a 25 s job once ended before a loaded machine's third tick)
hid=$(hold 300)
expect_rc 0 "plan 6 runs" u plan add X=2 X=3 X=4 X=5 X=6 X=7 --from base
max=0 held=0
for _ in $(seq 1 120); do
	t=$(u tick 2>&1)
	case $t in *"held back"*QOSMaxSubmitJobPerUserLimit*) held=1 ;; esac
	# while the limit holds: what the briefing says
	if [ "$held" = 1 ] && [ -n "$hid" ]; then
		u next --json >"$T_TMP/brief.json" 2>/dev/null
		as_user scancel "$hid"
		hid=
	fi
	n=$(squeue -h -u "$XLOOP_TEST_USER" -o %i | grep -c .)
	[ "$n" -gt "$max" ] && max=$n
	s=$(u status --json)
	printf '%s' "$s" | python3 -c 'import json,sys
runs = [r for r in json.load(sys.stdin)["runs"] if r["tag"] not in ("base", "r1") and not r["tag"].startswith("sw--")]
sys.exit(0 if len(runs) == 6 and all(r["attempts"] and r["attempts"][-1]["verdict"] for r in runs) else 1)' && break
	sleep 1
done
check "the tick said which limit held a run back" test "$held" = 1
check "never more than 3 jobs submitted at once (saw $max)" test "$max" -le 3
check "the briefing says the submit limit holds feeding back" python3 -c 'import json, sys
f = json.load(open(sys.argv[1]))["feed"]
sys.exit(0 if f["stopped"] in ("limit", "depth") and "limit" in f["why"] else "feed: %s" % f)' "$T_TMP/brief.json"
check "every run judged a success on its first attempt, no failure from the limit" python3 -c 'import json,sys
runs = [r for r in json.loads(sys.argv[1])["runs"] if r["tag"] not in ("base", "r1") and not r["tag"].startswith("sw--")]
bad = [(r["tag"], [(a["n"], a["phase"], a["verdict"]) for a in r["attempts"]]) for r in runs
       if len(r["attempts"]) != 1 or r["attempts"][0]["verdict"] != "success"]
sys.exit("%d runs; bad: %s" % (len(runs), bad) if bad or len(runs) != 6 else 0)' "$(u status --json)"
check "no submit failure was recorded" test -z "$(as_user sqlite3 "$d/.xloop/state.db" "SELECT id FROM attempt WHERE phase = 'submit_failed'")"
finish
