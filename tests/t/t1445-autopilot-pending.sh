#!/usr/bin/env bash
# Autopilot does not wait for verdicts (issue 26, part 5): with queue.depth
# 2, one tick fills the lane with three autopilot runs (one running, two
# waiting behind it), all distinct; runs still pending count as the model
# expects them to score, and each proposal's reason says how many. When
# one ends, the next tick brings the queue back to depth, still distinct.
. "$(dirname "$0")/lib.sh"

X=$XLOOP_BIN
PY=/usr/bin/python3
[ "$XLOOP_PROFILE" = accounting ] && { skip "autopilot" "runs in the plain profile"; finish; exit 0; }

cat >"$T_TMP/job.sh" <<'JOB'
#!/bin/bash
X=3
Y=2
SEED=1
echo "START x=$X y=$Y seed=$SEED device=cpu"
# in Slurm a run takes a while, so that the queue is seen full
[ -n "${SLURM_JOB_ID:-}" ] && sleep 20
/usr/bin/python3 - "$X" "$Y" "$SEED" "$XLOOP_RUN_DIR/cv.json" <<'PY'
import hashlib, json, sys
x, y, seed, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
h = int(hashlib.sha256(f"{x:g},{y:g},{seed}".encode()).hexdigest()[:8], 16) / 2**32
base = 1 - ((x - 5) ** 2 + (y - 5) ** 2 + 0.5 * (x - 5) * (y - 5)) / 40
json.dump({"score": base + 0.02 * (h - 0.5)}, open(out, "w"))
PY
echo FINISHED
JOB
step "chmod 644 job.sh" chmod 644 "$T_TMP/job.sh"

d=$(user_dir)
u() { as_user "$X" -C "$d" "$@"; }
new_study "$d" s 'c["resources"].update(cpus=1, mem="100M", time="00:02:00", gres="")
c["queue"]["depth"] = 2'
step "job.sh of the study" cp "$T_TMP/job.sh" "$d/job.sh"
step "the baseline run by hand" as_user env XLOOP_RUN_DIR="$d" bash "$d/job.sh" >/dev/null
step "adopt base" as_user "$X" -C "$d" adopt "$d/job.sh" --tag base --cv "$d/cv.json" >/dev/null
step "space X" u space set X=1..7:int
step "space Y" u space set Y=1..7:int
step "space seed" u space seed SEED
step "auto on" u auto on --budget-runs 6

# the study's jobs in Slurm: "STATE NAME" lines
jobs_of() {
	as_user squeue -h -u "$XLOOP_TEST_USER" -o '%T %j %Z' | awk -v d="$d" '$3 == d || index($3, d "/") == 1 {print $1, $2}'
}
# the configurations (X, Y, SEED) of the runs autopilot made, one line each
configs() {
	local r
	for r in "$d"/runs/s/*/; do
		[ "$(basename "$r")" = base ] && continue
		grep -E '^(X|Y|SEED)=' "$r/job.sh" | tr '\n' ' '
		echo
	done
}

u tick >"$T_TMP/tick1.txt" 2>&1
check "one tick made three autopilot runs (queue.depth 2: one running, two waiting)" \
	test "$(grep -c '^## .* · autopilot proposes' "$d/ops/decisions.md")" = 3
check "all three are in Slurm" test "$(jobs_of | wc -l)" = 3
check "the three runs are distinct configurations" test "$(configs | sort -u | wc -l)" = 3
# wait until the first runs: one running, two waiting behind it
for i in $(seq 1 30); do jobs_of | grep -q '^RUNNING' && break; sleep 1; done
jobs_of >"$T_TMP/q1.txt"
check "one runs while two autopilot runs wait" sh -c \
	"grep -c '^RUNNING' '$T_TMP/q1.txt' | grep -qx 1 && grep -c '^PENDING' '$T_TMP/q1.txt' | grep -qx 2"
check "a proposal made while runs were pending says they count as the model expects" \
	grep -q 'pending as the model expects' "$d/ops/decisions.md"
# the first ends (20 s): the next tick fills the lane again, while the
# others have no verdict yet
for i in $(seq 1 60); do [ "$(jobs_of | wc -l)" -lt 3 ] && break; sleep 1; done
u tick >"$T_TMP/tick2.txt" 2>&1
check "after the first verdict the next tick makes the queue 3 deep again" \
	test "$(jobs_of | wc -l)" = 3
check "four proposals now, all distinct configurations" sh -c \
	"test \"\$(grep -c '^## .* · autopilot proposes' '$d/ops/decisions.md')\" = 4"
check "the four runs are distinct configurations" test "$(configs | sort -u | wc -l)" = 4
finish
