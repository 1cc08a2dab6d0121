#!/usr/bin/env bash
# nodes: 3
# gpus: 1,2,2
# Nodes of 1 and 2 GPUs (issue 34 item 2): node1 has 1 GPU, node2 and
# node3 have 2 (tests/one.sh --nodes 3 --gpus 1,2,2; one.sh brings the
# cluster up so for this test in the nodes lane).
# Study a's runs ask --gres=gpu:2 with queue.lanes "auto": the lanes are
# the jobs of 2 GPUs the nodes hold at once, 2 (node1 holds none), not the
# partition's 5 GPUs: the first round puts one run on each 2-GPU node at
# once and nothing waits behind them; every run lands on node2 or node3 and
# none is left pending; each job's two GPUs are recorded, and the report
# has a row for each of them and none for node1's GPU, which the study
# cannot use (so it never counts it idle).
# Study b's run spans node2 and node3 with a GPU on each while another job
# holds node2's GPU 0: its GPUs differ by node (node2's 1, node3's 0), and
# the report's rows are exactly those two (not node3's GPU 1).
# Study c's runs span 2 nodes of a GPU each (#SBATCH --nodes=2) with lanes
# "auto": each takes 2 of the 5 places of 1 GPU, so 2 lanes, not 5 (issue
# 47): one next queues 2 of its 4 planned runs.
# Order comes from barriers: the jobs wait for a gate the test opens once
# it has seen what it checks; states are polled with deadlines.
. "$(dirname "$0")/lib.sh"
need_nodes 3
if [ "${XLOOP_GPUS:-}" != 1,2,2 ]; then
	skip "nodes of 1 and 2 GPUs" "needs them (tests/one.sh --nodes 3 --gpus 1,2,2)"
	finish
	exit
fi

X=$XLOOP_BIN
hold=
trap '[ -z "$hold" ] || scancel "$hold" 2>/dev/null
	[ -n "${XLOOP_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=0
echo "START x=$X node=$SLURMD_NODENAME gpus=${SLURM_JOB_GPUS:-none} device=cpu"
# wait (a minute at most) until the test opens the gate
for i in $(seq 300); do [ -e "$XLOOP_ROOT/gate" ] && break; sleep 0.2; done
printf '{"score": %s}\n' "$X" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
# study b's: one task on each of node2 and node3
sed 's|^X=0$|#SBATCH --nodes=2\n#SBATCH --nodelist=node[2-3]\nX=0|' "$T_TMP/job.sh" >"$T_TMP/job2.sh"
# study c's: any 2 nodes
sed 's|^X=0$|#SBATCH --nodes=2\nX=0|' "$T_TMP/job.sh" >"$T_TMP/job3.sh"
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 job.sh job2.sh job3.sh cv.json" chmod 644 "$T_TMP/job.sh" "$T_TMP/job2.sh" \
	"$T_TMP/job3.sh" "$T_TMP/cv.json"

# jobs DIR: "STATE NODES" of each queued or running job of the study in DIR
jobs() {
	as_user squeue -h -u "$XLOOP_TEST_USER" -o '%Z %T %N' |
		awk -v d="$1" '$1 == d || index($1, d "/") == 1 { print $2, $3 }'
}
# rows DIR: the report's GPU rows of the study in DIR, "node:gpu ..." sorted
rows() {
	as_user "$X" -C "$1" report --out "$1/report.html" --json >"$T_TMP/report.json" &&
		/usr/bin/python3 -c 'import json, sys
print(" ".join(sorted("%s:%s" % (g["node"], g["gpu"]) for g in json.load(open(sys.argv[1]))["gpus"])))' "$T_TMP/report.json"
}

# --- b: a job across node2 and node3, node2's GPU 0 held by another job
b=$(user_dir)
new_study "$b" mixedb 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["queue"]["depth"] = 0'
step "adopt a baseline (b)" as_user "$X" -C "$b" adopt "$T_TMP/job2.sh" --tag base --cv "$T_TMP/cv.json"
step "a run on two nodes (b)" as_user "$X" -C "$b" new r1 --from base --set X=1
touch "$T_TMP/hold"
hold=$(sbatch --parsable -p gpu -w node2 --gres=gpu:1 -o /dev/null \
	--wrap "while [ -e '$T_TMP/hold' ]; do sleep 0.3; done")
deadline=$((SECONDS + 30))
until [ "$(squeue -h -j "$hold" -o %T)" = RUNNING ]; do
	[ $SECONDS -lt $deadline ] || break
	sleep 0.2
done
step "submit it (b)" as_user "$X" -C "$b" submit r1 --no-chain
d=$b
deadline=$((SECONDS + 30))
map=
while [ $SECONDS -lt $deadline ]; do
	as_user "$X" -C "$b" next >>"$T_TMP/brief-b.txt" 2>&1
	map=$(db "SELECT a.gpus FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'r1'")
	[ -n "$map" ] && break
	sleep 0.3
done
check "b: its GPUs are recorded node by node ($map)" test "$map" = "node2=1;node3=0"
as_user touch "$b/gate"
rm -f "$T_TMP/hold"
deadline=$((SECONDS + 30))
while [ $SECONDS -lt $deadline ] && [ -z "$(db "SELECT verdict FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'r1'")" ]; do
	as_user "$X" -C "$b" next >>"$T_TMP/brief-b.txt" 2>&1
	sleep 0.3
done
check "b: the run on two nodes succeeded" test "$(db "SELECT verdict FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.tag = 'r1'")" = success
r=$(rows "$b")
check "b: the report's rows are its GPU on each node, node2's 1 and node3's 0 ($r)" test "$r" = "node2:1 node3:0"
validates "b: report --json validates" report "$T_TMP/report.json" "$T_TMP/report.json"

# --- a: runs of 2 GPUs, lanes "auto"
a=$(user_dir)
new_study "$a" mixeda 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:2")
c["queue"]["depth"] = 0
c["queue"]["lanes"] = "auto"'
step "adopt a baseline (a)" as_user "$X" -C "$a" adopt "$T_TMP/job.sh" --tag base --cv "$T_TMP/cv.json"
step "plan four runs (a)" as_user "$X" -C "$a" plan add X=1 X=2 X=3 X=4 --from base
d=$a
# judged: the runs of a with a verdict
judged() { db "SELECT count(*) FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.parent_id IS NOT NULL AND a.verdict IS NOT NULL"; }
deadline=$((SECONDS + 60)) most=0 first=
while [ $SECONDS -lt $deadline ]; do
	as_user "$X" -C "$a" next >>"$T_TMP/brief-a.txt" 2>&1
	j=$(jobs "$a")
	live=$(grep -c . <<<"$j")
	[ "$live" -gt "$most" ] && most=$live
	# the first round, both running: its GPUs recorded, then the gate opens
	if [ ! -e "$a/gate" ] && [ "$(grep -c '^RUNNING' <<<"$j")" -eq 2 ] &&
		[ "$(db "SELECT count(*) FROM attempt WHERE gpus IS NOT NULL AND gpus != ''")" -ge 2 ]; then
		first=$(awk '$1 == "RUNNING" { print $2 }' <<<"$j" | sort | paste -sd' ')
		as_user touch "$a/gate"
	fi
	[ "$(judged)" -ge 4 ] && break
	sleep 0.3
done
check "a: the first round runs one job on each 2-GPU node at once ($first)" test "$first" = "node2 node3"
check "a: two lanes, never more than 2 jobs queued or running ($most)" test "$most" -eq 2
check "a: every run judged, none left pending ($(judged) of 4)" test "$(judged)" -eq 4
check "a: every run succeeded on a 2-GPU node" test "$(db "SELECT group_concat(DISTINCT a.verdict || ' ' || a.node) FROM attempt a JOIN run r ON r.id = a.run_id WHERE r.parent_id IS NOT NULL AND NOT (a.verdict = 'success' AND a.node IN ('node2', 'node3'))")" = ""
check "a: its attempts are in lanes 0 and 1" test "$(db "SELECT max(lane) FROM attempt")" -le 1
# (a job of the second round may end before a next sees it run: "?" or none)
both=$(db "SELECT count(*) FROM attempt WHERE gpus = '0-1'")
check "a: each job seen running had both GPUs of its node ($both of them)" test "$both" -ge 2 -a "$(db "SELECT count(*) FROM attempt WHERE gpus NOT IN ('0-1', '?', '')")" = 0
r=$(rows "$a")
check "a: the report's rows are node2's and node3's two GPUs, none of node1 ($r)" test "$r" = "node2:0 node2:1 node3:0 node3:1"
validates "a: report --json validates" report "$T_TMP/report.json" "$T_TMP/report.json"

# --- c: runs of 2 nodes, lanes "auto"
c=$(user_dir)
new_study "$c" mixedc 'c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["queue"]["depth"] = 0
c["queue"]["lanes"] = "auto"'
step "adopt a baseline (c)" as_user "$X" -C "$c" adopt "$T_TMP/job3.sh" --tag base --cv "$T_TMP/cv.json"
step "plan four runs (c)" as_user "$X" -C "$c" plan add X=1 X=2 X=3 X=4 --from base
step "one next (c)" as_user "$X" -C "$c" next
n=$(jobs "$c" | grep -c .)
check "c: runs of 2 nodes get 2 lanes of the 5 places: 2 jobs queued, not 4 ($n)" test "$n" -eq 2
as_user touch "$c/gate"
finish
