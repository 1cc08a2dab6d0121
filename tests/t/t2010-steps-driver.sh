#!/usr/bin/env bash
# gpus: 4
# A study of runs with steps (issue 28) driven by Slurm alone (driver.mode
# slurm) on 2 lanes: one `next`, then only feeders run xloop. Every run's
# training (the GPU step, 10 s) and evaluation (a CPU step, 30 s) run as
# two jobs, all are judged, and the GPU never waits for an evaluation: in
# each lane the idle gap between one training's end and the next one's
# start stays at Slurm's scheduling latency (chained on the evaluation it
# would be 30 s). Needs the 4-GPU profile (8 CPUs: the evaluations run
# beside the trainings): tests/one.sh --gpus 4 tests/t/t2010-steps-driver.sh.
. "$(dirname "$0")/lib.sh"

if [ "${XLOOP_GPUS:-1}" -lt 4 ]; then
	skip "Slurm drives a study of runs with steps" "needs the 4-GPU test cluster (tests/one.sh --gpus 4)"
	finish
	exit
fi
if [ "$XLOOP_PROFILE" != plain ]; then
	skip "Slurm drives a study of runs with steps" "run once, without accounting (slow)"
	finish
	exit
fi
X=$XLOOP_BIN
U=$XLOOP_TEST_USER
d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }

new_study "$d" sd 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="gpu:1")
c["queue"].update(depth=1, lanes=2)
c["driver"]["mode"] = "slurm"'
cat >"$T_TMP/train.sh" <<'JOB'
#!/bin/bash
X=0
echo "START train x=$X gpu=${SLURM_JOB_GPUS:-none}"
sleep 10
echo "$X" >"$XLOOP_RUN_DIR/model.txt"
echo FINISHED
JOB
cat >"$T_TMP/eval.sh" <<'JOB'
#!/bin/bash
#SBATCH --time=00:01:00
echo "START eval gpu=${SLURM_JOB_GPUS:-none}"
sleep 30
printf '{"score": %s}\n' "$(cat "$XLOOP_RUN_DIR/model.txt")" >"$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
echo '{"score": 0}' >"$T_TMP/cv.json"
step "chmod 644 scripts" chmod 644 "$T_TMP/train.sh" "$T_TMP/eval.sh" "$T_TMP/cv.json"
expect_rc 0 "adopt a proven two-step baseline" u adopt "$T_TMP/train.sh" --tag base --step eval="$T_TMP/eval.sh" --cv "$T_TMP/cv.json"
expect_rc 0 "plan six changes" u plan add X=1 X=2 X=3 X=4 X=5 X=6
expect_rc 0 "one next" u next

sq() { as_user /usr/bin/python3 -c "import sqlite3,sys
c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True)
for r in c.execute(sys.argv[2]): print('|'.join('' if v is None else str(v) for v in r))" "$d/.xloop/state.db" "$1"; }
ours_queued() { as_user squeue -h -u "$U" -t PD,R,CF -o %i | grep -c .; }
for i in $(seq 1 240); do
	n=$(sq "SELECT count(*) FROM attempt WHERE n > 0 AND verdict IS NOT NULL")
	[ "$n" = 6 ] && [ "$(ours_queued)" = 0 ] && break
	sleep 1
done
check "the feeders judged all six runs" test "$(sq "SELECT count(*) FROM attempt WHERE n > 0 AND verdict = 'success'")" = 6
check "each run's evaluation ran as its own job" test "$(sq "SELECT count(*) FROM step_job WHERE phase = 'ended' AND state = 'COMPLETED'")" = 6
check "no evaluation had a GPU" sh -c "! grep -h 'START eval' '$d'/runs/sd/*/slurm/attempt1.eval.out | grep -v 'gpu=none'"
check "no job of xloop's is left queued" test "$(ours_queued)" = 0
check "the runs went into both lanes" test "$(sq "SELECT count(DISTINCT lane) FROM attempt WHERE n > 0")" = 2
# in each lane, the idle gap between one training's end and the next one's start
rows=$(sq "SELECT lane, job_id FROM attempt WHERE n > 0 ORDER BY id")
gaps=$(for r in $rows; do
	printf '%s ' "${r%%|*}"
	scontrol show job -o "${r#*|}"
done | python3 -c '
import sys, datetime
by = {}
for line in sys.stdin:
    lane, rest = line.split(" ", 1)
    kv = dict(w.split("=", 1) for w in rest.split() if "=" in w)
    p = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").timestamp()
    by.setdefault(lane, []).append((p(kv["StartTime"]), p(kv["EndTime"])))
gaps = []
for t in by.values():
    t.sort()
    gaps += [b[0] - a[1] for a, b in zip(t, t[1:])]
gaps.sort()
print(gaps[len(gaps) // 2] if gaps else 99, max(gaps) if gaps else 99, " ".join("%g" % g for g in gaps))')
set -- $gaps
echo "# idle gaps between trainings in a lane (s): ${*:3}; median $1, max $2 (evaluations take 30 s)"
# waiting for an evaluation would leave a gap of 30 s; Slurm's own start
# of a queued job is about a second, a few on a loaded machine
check "the GPU never waits for an evaluation (median gap $1 s <= 5)" python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 5 else 1)" "$1"
check "nor once (max gap $2 s < 15)" python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 15 else 1)" "$2"
finish
