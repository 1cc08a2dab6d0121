#!/usr/bin/env bash
# A study of runs with steps (issue 28) driven by Slurm alone (driver.mode
# slurm) on 2 lanes: one `next`, then only feeders run xloop. Every run's
# training (the GPU step, 8 s) and evaluation (a CPU step, 4 s) run as two
# jobs, all are judged, and the GPU never waits for an evaluation: the
# median idle gap between GPU jobs stays at Slurm's scheduling latency
# (chained on the evaluations it would be 4 s or more). The test node has
# 2 CPUs: an evaluation longer than the training would hold the CPU the
# next training needs, which is the node's limit, not the chain's.
. "$(dirname "$0")/lib.sh"

if [ "$XLOOP_PROFILE" != plain ]; then
	skip "Slurm drives a study of runs with steps" "run once, without accounting (slow)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" sd 'c["resources"].update(cpus=1, mem="100M", time="00:02:00")
c["queue"].update(depth=1, lanes=2)
c["driver"]["mode"] = "slurm"'
cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
X=0
echo "START train x=$X gpu=${CUDA_VISIBLE_DEVICES:-none}"
sleep 8
echo "$X" >"$XLOOP_RUN_DIR/model.txt"
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --time=00:01:00
echo "START eval gpu=${CUDA_VISIBLE_DEVICES:-none}"
sleep 4
printf '{"score": %s}\n' "$(cat "$XLOOP_RUN_DIR/model.txt")" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a proven two-step baseline" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh" --cv "$T_TMP/cv.json"
expect_rc 0 "plan five changes" u plan add X=1 X=2 X=3 X=4 X=5
expect_rc 0 "one next" u next

sq() { as_user /usr/bin/python3 -c "import sqlite3,sys
c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True)
for r in c.execute(sys.argv[2]): print('|'.join('' if v is None else str(v) for v in r))" "$d/.xloop/state.db" "$1"; }
ours_queued() { as_user squeue -h -u "$U" -t PD,R,CF -o %i | grep -c .; }
for i in $(seq 1 240); do
	n=$(sq "SELECT count(*) FROM attempt WHERE n > 0 AND verdict IS NOT NULL")
	[ "$n" = 5 ] && [ "$(ours_queued)" = 0 ] && break
	sleep 1
done
check "the feeders judged all five runs" test "$(sq "SELECT count(*) FROM attempt WHERE n > 0 AND verdict = 'success'")" = 5
check "each run's evaluation ran as its own job" test "$(sq "SELECT count(*) FROM step_job WHERE phase = 'ended' AND state = 'COMPLETED'")" = 5
check "no job of xloop's is left queued" test "$(ours_queued)" = 0
check "the runs went into both lanes" test "$(sq "SELECT count(DISTINCT lane) FROM attempt WHERE n > 0")" = 2
# the GPU steps' start and end times: the idle gap between one and the next
ids=$(sq "SELECT job_id FROM attempt WHERE n > 0")
gap=$(for id in $ids; do scontrol show job -o "$id"; done | python3 -c '
import sys, datetime
t = []
for line in sys.stdin:
    kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
    p = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
    t.append((p(kv["StartTime"]), p(kv["EndTime"])))
t.sort()
gaps = sorted(b[0] - a[1] for a, b in zip(t, t[1:]))
print(gaps[len(gaps) // 2] if gaps else 99)')
echo "# median idle gap between GPU steps: $gap s (evaluations take 4 s)"
check "the GPU never waits for an evaluation (median gap $gap s <= 2)" python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 2 else 1)" "$gap"
finish
