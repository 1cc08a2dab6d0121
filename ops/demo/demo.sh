#!/usr/bin/env bash
# The demo (./build.sh demo): a real experiment loop on the local test
# cluster. A temporary git repository gets the example study
# (runs/digits/base/job.sh: 5-fold CV on scikit-learn's digits); the
# baseline is submitted and proven, five one-variable changes are planned
# (one of them deliberately broken), and `xloop tick` drives the loop until
# the plan is done, as cron would. It ends with the briefing and the HTML
# report. Runs as root (it starts the cluster); xloop runs as the
# unprivileged user $XLOOP_DEMO_USER (default xloopt), from a copy in a
# directory of its own under /tmp: the checkout may be one that user
# cannot enter (a clone in a 0700 directory, /root). --user-check stops
# once the user ran that copy (before the cluster; tests/t/t0030-private-clone.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEMO_USER=${XLOOP_DEMO_USER:-xloopt}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it starts the test cluster)" >&2; exit 77; }
[ -x "$ROOT/xloop" ] || { echo "demo.sh: build ./xloop first (./build.sh)" >&2; exit 1; }
. "$ROOT/ops/lib/for-user.sh"

id "$DEMO_USER" >/dev/null 2>&1 || useradd -m "$DEMO_USER"
XDIR=$(mktemp -d /tmp/xloop-demo-bin-XXXXXX)
trap 'rm -rf "$XDIR"' EXIT
copy_for_user "$XDIR" "$ROOT/xloop"
X=$XDIR/xloop
check_user_runs "$DEMO_USER" "$X" >/dev/null
if [ "${1:-}" = --user-check ]; then
	echo "demo.sh: $DEMO_USER runs $("$X" --version)"
	exit 0
fi
if "$ROOT/ops/slurm/testcluster.sh" status >/dev/null 2>&1; then
	say "using the local Slurm test cluster that is up"
else
	say "starting the local Slurm test cluster"
	"$ROOT/ops/slurm/testcluster.sh" up
fi
eval "$("$ROOT/ops/slurm/testcluster.sh" env)"

d=$(mktemp -d /tmp/xloop-demo-XXXXXX)
chmod 755 "$d"
chown "$DEMO_USER" "$d"
# as the user, with a plain PATH (the job needs Debian's python3-sklearn)
u() { runuser -u "$DEMO_USER" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME="$d" \
	SLURM_CONF="$SLURM_CONF" "$@"; }
x() { u "$X" -C "$d" "$@"; }

say "a study in $d"
u git -C "$d" init -q -b main
u git -C "$d" config user.name "xloop demo"
u git -C "$d" config user.email demo@example.invalid
x init --study digits
u /usr/bin/python3 - "$d/xloop.json" <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["resources"].update(cpus=1, mem="1G", time="00:10:00")
c["metric"].update(name="accuracy", goal="max")
c["queue"]["depth"] = 2
# the test cluster's GPU is a device node: this model computes on the CPU
c.setdefault("breaker", {})["no_gpu"] = False
# the demo shows `xloop tick` driving the loop: no feeder jobs beside it
c.setdefault("driver", {})["mode"] = "none"
json.dump(c, open(p, "w"), indent=2)
PY
cp "$ROOT/runs/digits/base/job.sh" "$d/base-job.sh"
chown "$DEMO_USER" "$d/base-job.sh"
x adopt "$d/base-job.sh" --tag base
rm -f "$d/base-job.sh"

# tick as cron would (every few seconds here), printing what it reports
drive() {
	local deadline=$((SECONDS + $1)) out
	while [ $SECONDS -lt $deadline ]; do
		out=$(x tick 2>&1) || true
		[ -n "$out" ] && printf '%s\n' "$out"
		if eval "$2"; then
			return 0
		fi
		sleep 2
	done
	echo "demo.sh: gave up waiting after $1 s" >&2
	return 1
}
proven() { x status --json | /usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["best"] else 1)'; }
done_all() {
	x plan ls 2>/dev/null | grep -q '^the plan is empty' &&
		[ -z "$(u squeue -h -u "$DEMO_USER" -o %i)" ]
}

say "submitting the baseline and waiting for its verdict"
x submit base --no-chain
drive 120 proven

say "planning five one-variable changes (C=-1 is broken on purpose)"
x plan add C=0.1 C=10 SCALE=no C=-1 MAX_ITER=20
x next

say "xloop tick drives the loop until the plan is done"
drive 240 done_all
# the last job may have left the queue since the last tick: judge it, saying so
x tick 2>&1 || true

say "autopilot: a search space, the seed variable, a budget of 4 runs"
x space set C=0.03,0.1,0.3,1.0,3
x space seed SEED --replicates 2
x auto on --budget-runs 4
auto_done() {
	x auto status 2>/dev/null | grep -q '^stopped:' &&
		[ -z "$(u squeue -h -u "$DEMO_USER" -o %i)" ]
}
drive 300 auto_done
x tick 2>&1 || true
x auto status

say "the briefing"
x next

say "the report"
x report --out "$d/report.html"
x report --json --out "$d/report.html" | /usr/bin/python3 -c 'import json,sys
r = json.load(sys.stdin)
print("GPU idle %.1f%% of the study (%d s of %d s)" % (r["idle_percent"], r["idle_s"], r["span_s"]))'
echo
echo "study:  $d (git log, ops/decisions.md, runs/digits/*/slurm/attempt*.out)"
echo "report: $d/report.html"
echo "the test cluster is still up: ops/slurm/testcluster.sh down stops it"
