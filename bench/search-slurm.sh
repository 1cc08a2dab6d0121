#!/usr/bin/env bash
# The search benchmark's (b) through the real local Slurm (bench/search.py
# calls it as root): the demo's digits study (runs/digits/base/job.sh with
# REPEATS=2), its baseline run by hand and adopted, a search space, SEED as
# the seed variable and `auto on --budget-runs N`; then nothing but `xloop
# tick` until autopilot stopped and Slurm is empty. Takes a free test
# cluster slot as tests/one.sh does (its lock, directory and ports).
# Prints after each tick: RUNS {best's C, MAX_ITER, SCALE as JSON}.
#   bench/search-slurm.sh XLOOP BUDGET
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
X=${1:?xloop binary}
BUDGET=${2:-15}
USER_=${XLOOP_TEST_USER:-xloopt}
PY=/usr/bin/python3
id "$USER_" >/dev/null 2>&1 || useradd -m "$USER_"

. "$ROOT/tests/runlib.sh"
take_slot 1 2 3 4 0 >&2	# slot 0 last: it is the suite's and bench's
"$ROOT/ops/slurm/testcluster.sh" up >/dev/null 8>&- || { echo "test cluster did not come up" >&2; exit 1; }
eval "$("$ROOT/ops/slurm/testcluster.sh" env)"
"$ROOT/ops/slurm/testcluster.sh" adduser "$USER_" >/dev/null 8>&-

d=$(mktemp -d /tmp/xloop-bench-search-XXXXXX)
chmod 755 "$d"
chown "$USER_" "$d"
# xloop where the user can reach it: the checkout may be in a 0700 directory
. "$ROOT/ops/lib/for-user.sh"
xd=$(mktemp -d /tmp/xloop-bench-bin-XXXXXX)
trap 'rm -rf "$d" "$xd"' EXIT
copy_for_user "$xd" "$X"
X=$xd/${X##*/}
check_user_runs "$USER_" "$X" >/dev/null
u() { runuser -u "$USER_" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME="$d" \
	SLURM_CONF="$SLURM_CONF" OMP_NUM_THREADS=1 "$@" 8>&-; }
x() { u "$X" -C "$d" "$@"; }

u git -C "$d" init -q -b main
u git -C "$d" config user.name "xloop bench"
u git -C "$d" config user.email bench@example.invalid
x init --study digits >/dev/null
$PY -c "import json, sys
p = sys.argv[1]; c = json.load(open(p))
c['breaker']['no_gpu'] = False
c.setdefault('driver', {})['mode'] = 'none'
c['resources'].update(cpus=1, mem='500M', time='00:05:00', gres='')
c['queue']['depth'] = 1
json.dump(c, open(p, 'w'), indent=2)" "$d/xloop.json"
sed -e 's/^REPEATS=10$/REPEATS=2/' -e 's/^SEED=0$/SEED=101/' \
	"$ROOT/runs/digits/base/job.sh" >"$d/job.sh"
chown "$USER_" "$d/job.sh"
u env XLOOP_RUN_DIR="$d" bash "$d/job.sh" >/dev/null || { echo "the baseline failed" >&2; exit 1; }
x adopt "$d/job.sh" --tag base --cv "$d/cv.json" >/dev/null || exit 1
x space set C=0.001..10:log >/dev/null &&
	x space set MAX_ITER=25,50,100,200 >/dev/null &&
	x space set SCALE=no,yes >/dev/null &&
	x space seed SEED >/dev/null &&
	x auto on --budget-runs "$BUDGET" >/dev/null || { echo "setting up autopilot failed" >&2; exit 1; }

best() {	# RUNS {config of the best}
	x status --json | $PY -c "
import json, re, sys
s = json.load(sys.stdin)
tag = s['best'] or 'base'
text = open(sys.argv[1] + '/runs/digits/' + tag + '/job.sh').read()
cfg = {k: v.strip('\"\'') for k, v in re.findall(r'^(C|MAX_ITER|SCALE)=(\S+)$', text, re.M)}
print(len(s['runs']), json.dumps(cfg))" "$d"
}
for i in $(seq 1 600); do
	x tick >>"$d/ticks.txt" 2>&1
	best
	if grep -qiE 'autopilot stopped' "$d/ticks.txt" &&
		[ -z "$(u squeue -h -u "$USER_" -o '%i %Z' | grep -F " $d")" ]; then
		x tick >>"$d/ticks.txt" 2>&1
		best
		exit 0
	fi
	sleep 2
done
echo "autopilot did not finish in time" >&2
exit 1
