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
# The first study's jobs take a GPU on each node: the report draws the run
# on both nodes on each node's row ("node1 GPU 0") and report --json names
# the nodes of its GPU rows (the run waits at a gate until its GPUs are
# recorded). A third run of the first study runs no srun step (issue 47):
# its PATH's sacct answers for it as slurmdbd does before the job's start
# record (seen on this cluster: ops/slurm/captures/nodes/
# sacct_P_n_two_nodes_step_failed_transient.txt): a final allocation row
# named "allocation", no Partition, the batch host alone; its attempt must
# still name both nodes.
. "$(dirname "$0")/lib.sh"
need_nodes 3

X=$XLOOP_BIN
cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
#SBATCH --nodes=2
X=0
FAIL=0
STEP=1
echo "START x=$X fail=$FAIL device=cpu"
[ "$X" = 1 ] && sleep 2
# the run on both nodes waits (at most a minute) until the test opens the gate
if [ "$X" = 1 ]; then
	for i in $(seq 300); do [ -e "$XLOOP_ROOT/gate" ] && break; sleep 0.2; done
fi
if [ "$STEP" = 1 ]; then
	srun bash -c 'echo "on $SLURMD_NODENAME"; [ "$SLURM_NODEID" = 1 ] && [ '"$FAIL"' = 1 ] && exit 3; exit 0'
fi
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
# sacct whose allocation row of the run nostep is slurmdbd's first one
step "a PATH whose sacct is slurmdbd's before the start record" mkdir "$T_TMP/transient"
cat >"$T_TMP/transient/sacct" <<EOF
#!/bin/sh
# JobID|JobIDRaw|JobName|State|ExitCode|...|Comment (11)|NodeList (12)|Partition (13)|...
$(command -v sacct) "\$@" | awk -F'|' -v OFS='|' '\$1 !~ /\./ && \$11 ~ /\/nostep#/ {
	\$3 = "allocation"; sub(/\[/, "", \$12); sub(/[-,].*/, "", \$12); \$13 = "" } { print }'
EOF
step "chmod it" chmod 755 "$T_TMP/transient" "$T_TMP/transient/sacct"

acct=$(user_dir) noacct=$(user_dir)
# xl STUDY ARGS: xloop as the user, the no-accounting study with its PATH
xl() {
	local d=$1
	shift
	if [ "$d" = "$noacct" ]; then
		as_user env PATH="$T_TMP/noacct:$PATH" "$X" -C "$d" "$@"
	elif [ "$d" = "$acct" ]; then
		as_user env PATH="$T_TMP/transient:$PATH" "$X" -C "$d" "$@"
	else
		as_user "$X" -C "$d" "$@"
	fi
}
for s in acct noacct; do
	d=${!s}
	gres=
	[ "$s" = acct ] && gres=gpu:1
	new_study "$d" "sp$s" 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="'"$gres"'")
c["queue"]["depth"] = 0
c["breaker"] = {"program": 0, "no_gpu": False}'
	step "adopt a baseline ($s)" xl "$d" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
	step "a run on both nodes ($s)" xl "$d" new both --from base --set X=1
	step "a run whose step fails on the second ($s)" xl "$d" new bad --from base --set FAIL=1
	step "submit both ($s)" xl "$d" submit both --no-chain
	step "submit bad ($s)" xl "$d" submit bad --no-chain
done
step "a 2-node run with no srun step (acct)" xl "$acct" new nostep --from base --set STEP=0
step "submit nostep (acct)" xl "$acct" submit nostep --no-chain

# FIELD of attempt 1 of TAG in study DIR: att DIR TAG FIELD
att() { xl "$1" status --json | /usr/bin/python3 -c 'import json, sys
r = [x for x in json.load(sys.stdin)["runs"] if x["tag"] == sys.argv[1]][0]
a = [x for x in r["attempts"] if x["n"] == 1]
print(a[0].get(sys.argv[2]) or "" if a else "none")' "$2" "$3"; }

# GPUS TAG: the GPU indexes recorded for attempt 1 of TAG in study $d
gpus() { db "SELECT a.gpus FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = ?1 AND a.n = 1" "$1"; }
for s in acct noacct; do
	d=${!s}
	deadline=$((SECONDS + 90))
	# the CPU study's run needs no gate; the GPU study's once its GPUs are known
	[ "$s" = noacct ] && as_user touch "$d/gate"
	while [ $SECONDS -lt $deadline ]; do
		xl "$d" next >>"$T_TMP/brief-$s.txt" 2>&1
		if [ ! -e "$d/gate" ] && { [ -n "$(gpus both)" ] || [ $SECONDS -ge $((deadline - 30)) ]; }; then
			as_user touch "$d/gate"
		fi
		[ -n "$(att "$d" both verdict)" ] && [ -n "$(att "$d" bad verdict)" ] &&
			{ [ "$s" = noacct ] || [ -n "$(att "$d" nostep verdict)" ]; } && break
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
# GPU-hours count every node: elapsed x 1 (a GPU of --gres gpu:1) x 2 nodes
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
node=$(att "$acct" nostep node)
check "acct: a 2-node run with no srun step names both nodes ($node)" \
	test "$(as_user scontrol show hostnames "$node" | wc -l)" -eq 2
check "noacct: the reason says a step failed (DerivedExitCode)" grep -q 'DerivedExitCode' <<<"$(att "$noacct" bad verdict_reason)"

# the report: a GPU row is a node's GPU; the run on both nodes is drawn on each node's row
d=$acct
check "the 2-node run's GPUs were recorded while it ran ($(gpus both))" test -n "$(gpus both)"
step "report --json" xl "$acct" report --out "$acct/report.html" --json >"$T_TMP/report.json"
validates "report --json validates" report "$T_TMP/report.json"
nodes=$(as_user scontrol show hostnames "$(att "$acct" both node)" | tr '\n' ' ')
check "report --json names the nodes of the GPU rows, both of the 2-node run's ($nodes)" /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
rows = [(g["node"], g["gpu"]) for g in r["gpus"]]
print(rows)
assert all(n for n, _ in rows), "a row without its node"
assert set(sys.argv[2].split()) <= {n for n, _ in rows}, "a node of the run has no row"' "$T_TMP/report.json" "$nodes"
check "the page draws the 2-node run on each of its nodes' rows" /usr/bin/python3 -c '
import re, sys
page = open(sys.argv[1]).read()
rows = {m.group(2): int(m.group(1)) for m in
        re.finditer(r"<text class=\"gpu\" x=\"\d+\" y=\"(\d+)\">([^<]*)</text>", page)}
print(rows)
for node in sys.argv[2].split():
    bars = [int(m.group(1)) for m in re.finditer(r"<rect class=\"bar \w+\" x=\"[\d.]+\" y=\"(\d+)\""
            r"[^>]*><title>both attempt 1: [^<]*, on %s \(one of 2 nodes\)</title>" % re.escape(node), page)]
    named = [y for name, y in rows.items() if name.startswith(node + " GPU ")]
    assert len(bars) == 1, "%s: %d bars of the run" % (node, len(bars))
    assert bars[0] + 15 in named, "%s: the bar at y %d is not on a row of the node (%s)" % (node, bars[0], named)' "$acct/report.html" "$nodes"
finish
