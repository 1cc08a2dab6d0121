#!/usr/bin/env bash
# The feeder competes with the runs for the node's CPUs (issue 27): runs
# that ask for every CPU of the node leave a feeder (1 CPU) pending on
# Resources behind the next run, so each verdict comes one run late.
# doctor warns then; driver.partition gives the feeder a way past: here a
# partition made for the test on the same node with a higher PriorityTier
# (scontrol create, removed at the end), so Slurm starts the feeder first
# when a run ends. Measured: the judging lag (a run's end to its verdict)
# and the GPU's idle gap, without and with it; printed in the check names.
# With accounting: a QOS given as driver.qos reaches the feeder and the
# watchdog, not the runs.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
U=$XLOOP_TEST_USER
# With accounting: driver.qos reaches the feeder and the watchdog (the test
# cluster's priority/basic gives a QOS's priority no weight: only that).
if [ "$XLOOP_PROFILE" = accounting ]; then
	Q=xlfeedq
	cleanup() {
		scancel -u "$U" >/dev/null 2>&1
		sacctmgr -i modify user where name="$U" set qos-="$Q" >/dev/null 2>&1
		sacctmgr -i delete qos "$Q" >/dev/null 2>&1
	}
	cleanup
	check "a QOS for feeders" sacctmgr -i add qos "$Q"
	check "given to the test user" sacctmgr -i modify user where name="$U" set qos+="$Q"
	trap 'cleanup; rm -rf "$T_TMP"' EXIT
	printf '#!/bin/bash\nX=0\nsleep 20\necho "{\\"score\\": 1}" >"$XLOOP_RUN_DIR/cv.json"\n' >"$T_TMP/job.sh"
	echo '{"score": 0}' >"$T_TMP/cv.json"
	step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
	d=$(user_dir)
	u() { as_user "$X" -C "$d" "$@"; }
	new_study "$d" q "c['resources'].update(cpus=1, mem='100M', time='00:05:00')
c['driver']['mode'] = 'slurm'
c['driver']['qos'] = '$Q'"
	expect_rc 0 "adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
	expect_rc 0 "next with a run of 20 s" u next --set X=1 --from base
	f=$(as_user squeue -h -u "$U" -n xloop-feed -t PD -o '%i %q')
	w=$(as_user squeue -h -u "$U" -n xloop-watch -t PD -o '%i %q')
	r=$(as_user squeue -h -u "$U" -n X-1 -o '%i %q')
	check "the feeder runs in driver.qos ($f)" sh -c "echo '$f' | grep -q ' $Q\$'"
	check "so does the watchdog ($w)" sh -c "echo '$w' | grep -q ' $Q\$'"
	check "the run does not ($r)" sh -c "[ -n '$r' ] && ! echo '$r' | grep -q ' $Q\$'"
	finish
	exit
fi
if [ "$XLOOP_PROFILE" != plain ]; then
	skip "feeders past runs that take every CPU" "run once, without accounting (slow)"
	finish
	exit
fi
node=$(sinfo -h -N -p gpu -o %N | head -n1)
ncpu=$(sinfo -h -N -p gpu -o %c | head -n1)
P=xlfeed$$
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
SLEEP=6
echo "START x=$X device=cpu"
sleep "$SLEEP"
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"
verdicts() { as_user git -C "$1" log --format=%s -- ops/decisions.md | grep -c '^xloop: verdict'; }

# lag DIR: "MEDIAN_LAG MEDIAN_GAP" in seconds over the study's runs but base
# (lag: the job's EndTime to the attempt's judged_at; gap: one run's end
# to the next one's start)
lag() {
	as_user /usr/bin/python3 -c '
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
for r in db.execute("SELECT a.job_id, a.judged_at FROM attempt a JOIN run r ON r.id = a.run_id"
                    " WHERE r.tag != ? AND a.job_id != ?", ("base", "")):
    print(r[0], r[1])' "$1/.xloop/state.db" | while read -r id at; do
		echo "$at $(scontrol show job -o "$id" | tr ' ' '\n' | grep -E '^(StartTime|EndTime)=' | cut -d= -f2 | tr '\n' ' ')"
	done | python3 -c '
import sys, datetime
p = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
rows = sorted((p(s), p(e), float(a)) for a, s, e in (l.split() for l in sys.stdin))
lags = sorted(a - e for s, e, a in rows)
gaps = sorted(b[0] - a[1] for a, b in zip(rows, rows[1:]))
med = lambda v: v[len(v) // 2] if v else 99
print("%g %g" % (med(lags), med(gaps)))'
}

# study DIR NAME PART: 4 runs asking every CPU, one next, then Slurm alone
study() {
	local d=$1 name=$2 part=$3
	u() { as_user "$X" -C "$d" "$@"; }
	new_study "$d" "$name" "c['resources'].update(cpus=$ncpu, mem='100M', time='00:05:00')
c['driver']['mode'] = 'slurm'
c['driver']['partition'] = '$part'"
	expect_rc 0 "$name: adopt" u adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
	expect_rc 0 "$name: plan add with 4 changes" u plan add X=1 X=2 X=3 X=4
	u doctor >"$T_TMP/doctor-$name.txt" 2>&1
	expect_rc 0 "$name: one next" u next
	for i in $(seq 1 150); do
		[ "$(verdicts "$d")" -ge 4 ] && break
		sleep 1
	done
	check "$name: the 4 runs judged ($(verdicts "$d"))" test "$(verdicts "$d")" -ge 4
}

d1=$(user_dir)
study "$d1" shared ""
check "doctor warns: runs take every CPU, the feeder has no way past" \
	grep -qE '^warn +driver-cpus +runs ask for every CPU of their node' "$T_TMP/doctor-shared.txt"
set -- $(lag "$d1")
lag1=$1 gap1=$2

step "a feeder partition on the same node, PriorityTier 10" \
	scontrol create PartitionName="$P" Nodes="$node" PriorityTier=10 MaxTime=00:10:00 State=UP
d2=$(user_dir)
study "$d2" tier "$P"
check "doctor: the feeder goes past by driver.partition" \
	grep -qE "^ok +driver-cpus +.*feeders go past them by partition $P" "$T_TMP/doctor-tier.txt"
set -- $(lag "$d2")
lag2=$1 gap2=$2
scontrol delete PartitionName="$P" >/dev/null 2>&1
check "judging lag: ${lag1} s behind the runs' CPUs, ${lag2} s with driver.partition (GPU gap ${gap1} s -> ${gap2} s)" \
	python3 -c "import sys; sys.exit(0 if $lag2 < $lag1 and $lag2 <= 3 else 1)"
finish
