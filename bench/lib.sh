# shellcheck shell=bash
# Helpers for the benchmark scripts; source it (bench/run.sh sets BENCH_OUT).
#   u CMD...              run CMD as the unprivileged user, with the Slurm client config
#   study DIR NAME DEPTH  a git repository with `xloop init`, the bench job.sh adopted as base
#   dbq DIR SQL           one value (or one per line) from a study's state DB, read as the user
#   live_jobs             how many jobs of the user Slurm still has queued or running
set -u

BENCH_ROOT=${BENCH_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# what the user runs, where it can reach it (bench/run.sh copies it there)
BENCH_USER_ROOT=${BENCH_USER_ROOT:-$BENCH_ROOT}
X=${XLOOP_BIN:-$BENCH_USER_ROOT/xloop}
BU=${XLOOP_BENCH_USER:-xloopt}
PY=/usr/bin/python3
# the seconds one benchmark job sleeps (the "~10 s" experiment)
RUN_SECS=${BENCH_RUN_SECS:-10}

say() { printf '==> %s\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }

# As the benchmark user, with a plain PATH (never a shim unless asked).
u() {
	runuser -u "$BU" -- env PATH=/usr/local/bin:/usr/bin:/bin HOME="${BENCH_HOME:-/tmp}" \
		${SLURM_CONF:+SLURM_CONF="$SLURM_CONF"} "$@"
}

# A directory the user owns under the benchmark's scratch directory.
user_dir() {
	local d
	d=$(mktemp -d "$BENCH_OUT/$1-XXXXXX")
	chmod 755 "$d"
	chown "$BU" "$d"
	echo "$d"
}

# The job every study runs: START, sleep, a cv.json with score X, FINISHED.
write_job() {
	cat >"$1" <<JOB
#!/bin/bash
X=0
SLEEP=$RUN_SECS
echo "START x=\$X device=cpu"
sleep "\$SLEEP"
printf '{"score": %s}\n' "\$X" >"\$XLOOP_RUN_DIR/cv.json"
echo FINISHED
JOB
	chmod 644 "$1"
}

# study DIR NAME DEPTH [DRIVER]: git init, xloop init, small resources (one
# GPU each), queue.depth DEPTH, driver.mode DRIVER (default none: only the
# bench's own calls drive it), the job adopted as the proven baseline "base".
study() {
	local d=$1 name=$2 depth=$3 driver=${4:-none}
	u git -C "$d" init -q -b main
	u git -C "$d" config user.name "xloop bench"
	u git -C "$d" config user.email bench@example.invalid
	u "$X" -C "$d" init --study "$name" >/dev/null
	u "$PY" - "$d/xloop.json" "$depth" "$driver" <<'PY'
import json, sys
p, depth = sys.argv[1], int(sys.argv[2])
c = json.load(open(p))
c["resources"].update(cpus=1, mem="100M", time="00:05:00", gres="gpu:1")
c["slurm"]["partition"] = "gpu"
c["queue"]["depth"] = depth
c.setdefault("driver", {})["mode"] = sys.argv[3]
# the test cluster's GPU is a device node: the job computes on the CPU
c["breaker"]["no_gpu"] = False
json.dump(c, open(p, "w"), indent=2)
PY
	write_job "$d/base-job.sh"
	printf '{"score": 0}\n' >"$d/base-cv.json"
	chown "$BU" "$d/base-job.sh" "$d/base-cv.json"
	u "$X" -C "$d" adopt "$d/base-job.sh" --tag base --cv "$d/base-cv.json" >/dev/null
	rm -f "$d/base-job.sh" "$d/base-cv.json"
}

# dbq DIR SQL: the rows of a query on the study's DB, one per line, read as the user.
dbq() {
	u "$PY" -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=10)
for row in c.execute(sys.argv[2]):
    print("|".join("" if v is None else str(v) for v in row))' "$1/.xloop/state.db" "$2"
}

# Jobs of the user that Slurm has queued or running.
live_jobs() {
	u squeue -h -u "$BU" -o %i | grep -c . || true
}

# Seconds (one decimal) since $1, a value of $EPOCHREALTIME.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
