#!/usr/bin/env bash
# Every command that leaves work leaves the one feeder (issue 27), with
# driver.mode slurm and no xloop call after it: `sweep` (its tasks are
# judged), `replicate` (its plan entries are submitted and judged: a
# feeder starts at once when nothing runs), `plan add` on an idle study
# (the same; with Slurm unreachable it still stores the entry and warns; no
# Slurm call with driver.mode none), `auto on` (its proposal is submitted
# and judged with no `next`). Autopilot with a baseline that
# has not run (adopt without --cv, space set, auto on, next): autopilot runs
# the baseline first, says so, counts it in the budget, and goes on to its
# budget. A baseline that failed: the briefing names the person's step and
# no feeder (nor watchdog) is left to poll Slurm for it; nor after autopilot
# converged.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "feeders on every path" "run once, without accounting (slow)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=3
SEED=1
SLEEP=3
echo "START x=$X device=cpu"
sleep "$SLEEP"
printf '{"score": %s.%s}\n' "$(( 10 - (X - 4) * (X - 4) ))" "$SEED" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
cat >"$T_TMP/bad.sh" <<'JOB'
#!/bin/bash
X=3
echo "START x=$X device=cpu"
echo "no data here" >&2
exit 3
JOB
echo '{"score": 9.1}' >"$T_TMP/cv.json"
step "chmod 644 job.sh bad.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/bad.sh" "$T_TMP/cv.json"

feeders() { as_user squeue -h -u "$U" -n xloop-feed -t PD -o %i | grep -c .; }
queued() { as_user squeue -h -u "$U" -t PD,R,CF -o %i | grep -c .; }
verdicts() { as_user git -C "$1" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict'; }
wait_verdicts() {
	local i
	for i in $(seq 1 "$3"); do
		[ "$(verdicts "$1")" -ge "$2" ] && return 0
		sleep 1
	done
	return 1
}
wait_empty() {
	local i
	for i in $(seq 1 "$1"); do
		[ "$(queued)" = 0 ] && return 0
		sleep 1
	done
	# what is left, for the failure's detail
	as_user squeue -u "$U" -o '%i %j %T %r %S %k'
	return 1
}
conf='c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["driver"]["mode"] = "slurm"'

# sweep: the array's tasks are judged with no xloop call after it
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" sw "$conf"
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "sweep --set X=4,5" u sweep --set X=4,5 --from base
check "a feeder waits behind the sweep's tasks" test "$(feeders)" = 1
wait_verdicts "$d" 2 90
check "both tasks judged and committed with no other xloop call ($(verdicts "$d"))" \
	test "$(verdicts "$d")" -ge 2
check "then nothing of xloop's is queued" wait_empty 60

# replicate: queued in the plan, submitted and judged by the feeder it leaves
expect_rc 0 "space seed SEED" u space seed SEED
expect_rc 0 "replicate base -n 1 with nothing running" u replicate base -n 1
check "a feeder is queued to submit it" test "$(queued)" -ge 1
wait_verdicts "$d" 3 90
check "the replicate submitted, judged and committed with no other xloop call" \
	test "$(verdicts "$d")" -ge 3
check "then nothing of xloop's is queued" wait_empty 60

# plan add on an idle study: the feeder it leaves submits and judges it
n=$(verdicts "$d")
expect_rc 0 "plan add X=6 with nothing queued" u plan add X=6 --from base
check "a feeder is queued to submit it" test "$(queued)" -ge 1
wait_verdicts "$d" $((n + 1)) 90
check "the entry submitted, judged and committed with no other xloop call" \
	test "$(verdicts "$d")" -gt "$n"
check "then nothing of xloop's is queued" wait_empty 60
# Slurm unreachable (an squeue that fails, its calls counted): plan add is
# a local edit; with driver.mode none it asks Slurm nothing
w=$(user_dir)
step "mkdir bin" mkdir -p "$T_TMP/bin"
printf '#!/bin/sh\necho "$*" >>%s/squeue.calls\necho "squeue: error: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' \
	"$w" >"$T_TMP/bin/squeue"
step "an squeue that fails" chmod 755 "$T_TMP" "$T_TMP/bin" "$T_TMP/bin/squeue"
nos() { as_user env PATH="$T_TMP/bin:$PATH" "$X" -C "$d" "$@"; }
nos plan add X=7 --from base >"$T_TMP/pa.out" 2>"$T_TMP/pa.err"
rc=$?
u plan ls >"$T_TMP/pa.ls" 2>&1
check "plan add with Slurm unreachable succeeds (exit $rc) and stores the entry" sh -c \
	"[ $rc = 0 ] && grep -q '^plan [0-9]*: X=7 from base' '$T_TMP/pa.out' && grep -q 'X=7' '$T_TMP/pa.ls'"
check "with a warning that no feeder could be queued" grep -q "no feeder job could be queued" "$T_TMP/pa.err"
check "after asking Slurm (driver.mode slurm)" test -s "$w/squeue.calls"
expect_rc 0 "plan rm it" u plan rm "$(u plan ls --json | python3 -c 'import json,sys; print([e["id"] for e in json.load(sys.stdin)["plan"] if e["value"] == "7"][0])')"
step "driver.mode none" as_user python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['driver']['mode']='none'; json.dump(c, open(p,'w'), indent=2)" "$d/xloop.json"
step "no squeue calls yet" rm -f "$w/squeue.calls"
expect_rc 0 "plan add with driver.mode none" nos plan add X=8 --from base
check "asks Slurm nothing" test ! -e "$w/squeue.calls"

# autopilot with a baseline that has not run
d2=$(user_dir)
u2() { as_user "$X" -C "$d2" "$@"; }
new_study "$d2" ap "$conf"
expect_rc 0 "adopt without --cv" u2 adopt "$T_TMP/job.sh" --tag base
expect_rc 0 "space set X" u2 space set X=1..6:int
u2 auto on --budget-runs 3 >"$T_TMP/on.txt" 2>&1
check "auto on says what it set going: the baseline first, by the feeder job it left (issue 44)" sh -c \
	"grep -q '^first: the baseline base, which has not run' '$T_TMP/on.txt' && grep -qE '^the feeder job [0-9]+ submits it' '$T_TMP/on.txt' || { cat '$T_TMP/on.txt'; exit 1; }"
u2 next >"$T_TMP/next.txt" 2>&1
# on a busy machine the feeder \`auto on\` left may tick first: then its log
# says it, once that tick has ended (a deadline, not a duration)
said_baseline() {
	grep -q 'base.*the baseline' "$T_TMP/next.txt" || grep -rqs 'base.*the baseline' "$d2/.xloop/driver"
}
check "next (or the first feeder) submits the baseline first and says so" wait_for 120 said_baseline
check "ops/decisions.md says autopilot runs the baseline" \
	grep -q "autopilot runs the baseline base" "$d2/ops/decisions.md"
wait_verdicts "$d2" 3 150
check "the baseline and 2 proposals judged with no other xloop call ($(verdicts "$d2"))" \
	test "$(verdicts "$d2")" -ge 3
check "then nothing of xloop's is queued" wait_empty 60
u2 status --json >"$T_TMP/st.json"
check "the baseline counts in the budget: 3 runs in all" test \
	"$(python3 -c "import json; print(len(json.load(open('$T_TMP/st.json'))['runs']))")" = 3
u2 auto status >"$T_TMP/auto.txt" 2>&1
check "auto status: the budget spent" grep -q "3 of 3" "$T_TMP/auto.txt"

# a baseline that fails: the briefing names the step; nothing polls Slurm
d3=$(user_dir)
u3() { as_user "$X" -C "$d3" "$@"; }
new_study "$d3" apf "$conf"
expect_rc 0 "adopt a failing job without --cv" u3 adopt "$T_TMP/bad.sh" --tag base
expect_rc 0 "space set X" u3 space set X=1..6:int
expect_rc 0 "auto on" u3 auto on --budget-runs 5
expect_rc 0 "next" u3 next
wait_verdicts "$d3" 1 60
check "the baseline's failure judged by the feeder" test "$(verdicts "$d3")" -ge 1
# a deadline (a feeder may queue one more that finds nothing, slow on a
# busy machine); a watchdog left behind waits 600 s and still fails it
check "then no feeder or watchdog is left to poll Slurm" wait_empty 120
sleep 5
check "and none comes back" test "$(queued)" = 0
u3 next >"$T_TMP/next3.txt" 2>&1
check "the briefing names the person's step" grep -q "baseline base failed.*xloop retry base" "$T_TMP/next3.txt"
check "next leaves no feeder for it" test "$(queued)" = 0

# autopilot converged, no budget: nothing polls Slurm afterwards either
d4=$(user_dir)
u4() { as_user "$X" -C "$d4" "$@"; }
new_study "$d4" apc "$conf"
expect_rc 0 "adopt" u4 adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "a space of one other value" u4 space set X=3,4
expect_rc 0 "auto on, no budget (and no next)" u4 auto on
wait_verdicts "$d4" 1 60
check "autopilot's one run proposed and judged by the feeder auto on left" \
	test "$(verdicts "$d4")" -ge 1
check "converged: then no feeder or watchdog is left" wait_empty 40
sleep 5
check "and none comes back" test "$(queued)" = 0
finish
