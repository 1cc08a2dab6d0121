#!/usr/bin/env bash
# nodes: 3
# Runs that span nodes (issue 34 item 5), on the multi-node test cluster:
# a job.sh with #SBATCH --nodes=2 and srun inside is one run. One whose srun
# ran on both nodes succeeds and its attempt names both nodes; one whose
# srun step exits 3 on the second node while the batch script exits 0 (and
# cv.json is written) is a failure, read from accounting's step records and,
# with accounting out of reach, from scontrol's DerivedExitCode. The second
# study sees no accounting: its PATH's sacct says what Slurm's says when
# accounting storage is disabled (this cluster has accounting; a cluster
# without it gives the same scontrol record:
# ops/slurm/captures/nodes/scontrol_show_job_d_o_two_nodes_step_failed_noacct.txt).
. "$(dirname "$0")/lib.sh"
need_nodes 3

X=$XLOOP_BIN
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --nodes=2
X=0
FAIL=0
echo "START x=$X fail=$FAIL device=cpu"
[ "$X" = 1 ] && sleep 2
srun bash -c 'echo "on $SLURMD_NODENAME"; [ "$SLURM_NODEID" = 1 ] && [ '"$FAIL"' = 1 ] && exit 3; exit 0'
echo '{"score": 0.5}' >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
exit 0
JOB
echo '{"score": 0.4}' >"$T_TMP/cv.json"
step "chmod 644 job.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/cv.json"

# sacct as Slurm's own when accounting storage is disabled
step "a PATH whose sacct has no accounting" mkdir "$T_TMP/noacct"
printf '#!/bin/sh\necho "Slurm accounting storage is disabled" >&2\nexit 1\n' >"$T_TMP/noacct/sacct"
step "chmod it" chmod 755 "$T_TMP/noacct" "$T_TMP/noacct/sacct"

acct=$(user_dir) noacct=$(user_dir)
# xl STUDY ARGS: xloop as the user, the no-accounting study with its PATH
xl() {
	local d=$1
	shift
	if [ "$d" = "$noacct" ]; then
		as_user env PATH="$T_TMP/noacct:$PATH" "$X" -C "$d" "$@"
	else
		as_user "$X" -C "$d" "$@"
	fi
}
for s in acct noacct; do
	d=${!s}
	new_study "$d" "sp$s" 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="")
c["queue"]["depth"] = 0
c["breaker"] = {"program": 0, "no_gpu": False}'
	step "adopt a baseline ($s)" xl "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
	step "a run on both nodes ($s)" xl "$d" new both --from base --set X=1
	step "a run whose step fails on the second ($s)" xl "$d" new bad --from base --set FAIL=1
	step "submit both ($s)" xl "$d" submit both --no-chain
	step "submit bad ($s)" xl "$d" submit bad --no-chain
done

# FIELD of attempt 1 of TAG in study DIR: att DIR TAG FIELD
att() { xl "$1" status --json | /usr/bin/python3 -c 'import json, sys
r = [x for x in json.load(sys.stdin)["runs"] if x["tag"] == sys.argv[1]][0]
a = [x for x in r["attempts"] if x["n"] == 1]
print(a[0].get(sys.argv[2]) or "" if a else "none")' "$2" "$3"; }

for s in acct noacct; do
	d=${!s}
	deadline=$((SECONDS + 90))
	while [ $SECONDS -lt $deadline ]; do
		xl "$d" next >>"$T_TMP/brief-$s.txt" 2>&1
		[ -n "$(att "$d" both verdict)" ] && [ -n "$(att "$d" bad verdict)" ] && break
		sleep 0.5
	done
	check "$s: both runs judged" test -n "$(att "$d" bad verdict)"
	check "$s: the run on two nodes succeeded" test "$(att "$d" both verdict)" = success
	node=$(att "$d" both node)
	check "$s: its attempt names both nodes ($node)" test "$(as_user scontrol show hostnames "$node" | wc -l)" -eq 2
	check "$s: the step that failed on one node fails the run" test "$(att "$d" bad verdict)" = failure
	reason=$(att "$d" bad verdict_reason)
	echo "# $s: $reason"
	check "$s: the reason is the step's exit 3, not cv.json" grep -q '3:0' <<<"$reason"
	log=$(att "$d" both log)
	check "$s: its log has the srun step's line from each node" test "$(grep -c '^on node' "$log")" -eq 2
done
# GPU-hours count every node: elapsed x 1 (a CPU job) x 2 nodes
hours=$(xl "$acct" export --format jsonl --attempts | /usr/bin/python3 -c 'import json, sys
from datetime import datetime
for l in sys.stdin:
    r = json.loads(l)
    if r["tag"] == "both":
        secs = (datetime.fromisoformat(r["end"].replace("Z", "+00:00")) -
                datetime.fromisoformat(r["start"].replace("Z", "+00:00"))).total_seconds()
        print("%.3f %g" % (r["gpu_hours"] * 3600 / secs, secs) if secs else "0 0")')
check "export: the 2-node run's GPU-hours count both nodes ($hours)" test "${hours%% *}" = 2.000
check "acct: the reason names the step and its nodes" grep -q 'step [0-9]*\.0 (bash) on node\[1-2\] ended FAILED 3:0' <<<"$(att "$acct" bad verdict_reason)"
check "noacct: the reason says a step failed (DerivedExitCode)" grep -q 'DerivedExitCode' <<<"$(att "$noacct" bad verdict_reason)"
finish
