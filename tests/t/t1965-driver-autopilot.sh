#!/usr/bin/env bash
# Slurm drives autopilot to its budget (issue 20 with issue 17): an empty
# plan, a search space, `auto on --budget-runs 3`, one `next`, and then no
# xloop call but the feeder jobs': autopilot's 3 runs are submitted, judged
# and committed, two commits a run (made, verdict: issue 44), and then no
# job of xloop's is left queued.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "Slurm drives autopilot" "run once, without accounting"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=3
SLEEP=4
echo "START x=$X device=cpu"
sleep "$SLEEP"
printf '{"score": %s}\n' "$(( 10 - (X - 4) * (X - 4) ))" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 9}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
new_study "$d" auto 'c["resources"].update(cpus=1, mem="100M", time="00:05:00")
c["driver"]["mode"] = "slurm"'
expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
expect_rc 0 "space set X" u space set X=1..6:int
expect_rc 0 "auto on --budget-runs 3" u auto on --budget-runs 3
c0=$(as_user git -C "$d" rev-list --count HEAD)
expect_rc 0 "one next" u next
check "a feeder waits behind autopilot's first run" sh -c \
	"[ \"\$(runuser -u '$U' -- env SLURM_CONF='$SLURM_CONF' squeue -h -u '$U' -n xloop-feed -t PD -o %i | grep -c .)\" = 1 ]"
verdicts() { as_user git -C "$d" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict'; }
for i in $(seq 1 180); do
	[ "$(verdicts)" -ge 3 ] && break
	sleep 1
done
check "autopilot's 3 runs judged and committed with no other xloop call ($(verdicts))" test "$(verdicts)" -ge 3
for i in $(seq 1 60); do
	[ -z "$(as_user squeue -h -u "$U" -o %i)" ] && break
	sleep 1
done
check "then no job of xloop's is queued" test -z "$(as_user squeue -h -u "$U" -o %i)"
# issue 44: two commits a run, one when it is made (its job.sh and the
# proposal's entry), one for its verdict (a promotion's entry in it)
subjects=$(as_user git -C "$d" log --format=%s "HEAD~$(( $(as_user git -C "$d" rev-list --count HEAD) - c0 ))..HEAD")
check "two commits a run: 3 made, 3 verdicts, nothing else ($(tr '\n' ';' <<<"$subjects"))" test \
	"$(grep -c '^xloop: autopilot proposes' <<<"$subjects") $(grep -c '^xloop: verdict' <<<"$subjects") $(grep -c . <<<"$subjects")" = "3 3 6"
p=$(as_user git -C "$d" log --format=%H --grep '^xloop: autopilot proposes' -n 1)
check "a proposal's commit holds its job.sh and its ops/decisions.md entry" sh -c \
	"runuser -u '$U' -- git -C '$d' show --name-only --format= '$p' | sort | tr '\n' ' ' | grep -qE '^ops/decisions.md runs/auto/[^ ]+/job.sh \$'"
u status --json >"$T_TMP/status.json"
check "exactly the budget: 3 runs beside the baseline" test \
	"$(python3 -c "import json; print(len(json.load(open('$T_TMP/status.json'))['runs']))")" = 4
finish
