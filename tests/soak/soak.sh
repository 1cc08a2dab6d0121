#!/usr/bin/env bash
# The chaos soak (issue 21): tests/soak/soak.sh [--bench] [--nodes [N]] [MINUTES]
# (default 30). A study on its own cluster slot (tests/one.sh's locks;
# accounting, 2 fake GPUs), its .xloop/ on a 20 MB loop-mounted ext4,
# driven by the Slurm driver (then by ticks as well) through faults on a
# fixed-seed schedule (tests/soak/soak.py), then checked against sacct and
# git (tests/soak/check.py). Prints "ok - soak: ..." lines and a last
# "N passed, N failed, N skipped" line; --bench writes the figures to
# BENCHMARKS.md's soak section. Needs root and the builds: ./xloop and
# the static test build build/static-test/xloop (crash points).
# --nodes [N] (issue 34; N from 2 to 9, default 3; a single digit right
# after --nodes is N, not MINUTES): the multi-node cluster instead
# (testcluster.sh up --nodes N --gpus 1), the runs in the preemptible
# partition low on N lanes, and the faults of many nodes: a node lost
# mid-run that returns, a node drained, a preemption wave (soak.py);
# --bench then writes BENCHMARKS.md's "On many nodes" subsection. Only one
# multi-node cluster may run on a machine (kill-node finds nodes by name).
# XLOOP_SOAK_RUN_SECS sets the runs' length (default 15), XLOOP_SOAK_SEED
# the schedule's seed (default 21), XLOOP_KEEP_TMP=1 keeps the files (a failed soak keeps them, with
# the study's .xloop and the cluster's logs).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
usage() { echo "usage: tests/soak/soak.sh [--bench] [--nodes [N]] [MINUTES]" >&2; exit 2; }
bench= NODES=0
while [ $# -gt 0 ]; do
	case $1 in
	--bench) bench=1; shift ;;
	--nodes)
		NODES=3
		shift
		[[ ${1:-} =~ ^[0-9]$ ]] && { [ "$1" -ge 2 ] || usage; NODES=$1; shift; }
		;;
	--*) usage ;;
	*) break ;;
	esac
done
[ $# -le 1 ] || usage
MINUTES=${1:-30}
[[ $MINUTES =~ ^[0-9]+([.][0-9]+)?$ ]] || usage
[ "$(id -u)" -eq 0 ] || { echo "tests/soak/soak.sh: needs root (the cluster, the loop mount)" >&2; exit 77; }
XBIN=${XLOOP_SOAK_BIN:-$ROOT/build/static-test/xloop}
[ -x "$XBIN" ] || { echo "tests/soak/soak.sh: no $XBIN (build it: ./build.sh test or ./build.sh soak)" >&2; exit 66; }
U=${XLOOP_TEST_USER:-xloopt}
id "$U" >/dev/null 2>&1 || useradd -m "$U"
RUN_SECS=${XLOOP_SOAK_RUN_SECS:-15}
SEED=${XLOOP_SOAK_SEED:-21}

# a cluster slot of tests/one.sh's (fd 8, closed for everything started here)
. tests/runlib.sh
open_path_for_user "$ROOT"
take_slot
TC=ops/slurm/testcluster.sh

W=$(mktemp -d /tmp/xloop-soak-XXXXXX)
chmod 755 "$W"
D=$W/study
mnt=
rc=1
cleanup() {
	# a failed soak keeps its evidence: the study's .xloop (out of the loop
	# mount), the cluster's logs, the harness's files
	if [ "$rc" -ne 0 ] && [ -d "$W" ]; then
		cp -a "$D/.xloop" "$W/xloop-state" 2>/dev/null
		cp -a "${XLOOP_TESTCLUSTER_DIR:-/nonexistent}/log" "$W/cluster-log" 2>/dev/null
	fi
	[ -n "$mnt" ] && { umount "$D/.xloop" 2>/dev/null || umount -l "$D/.xloop" 2>/dev/null; }
	$TC down >/dev/null 2>&1 8>&- || true
	if [ -n "${XLOOP_KEEP_TMP:-}" ] || [ "$rc" -ne 0 ]; then
		echo "# files kept in $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

fail_setup() { echo "not ok - soak: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
if [ "$NODES" -gt 0 ]; then
	up=(--nodes "$NODES" --gpus 1)
else
	up=(--gpus 2)
fi
$TC up --accounting "${up[@]}" >"$W/cluster.log" 2>&1 8>&- || { cat "$W/cluster.log"; fail_setup "the test cluster did not come up"; }
eval "$($TC env)"
$TC adduser "$U" >/dev/null 8>&-
scancel -u "$U" >/dev/null 2>&1 || true

# the study, its .xloop/ on a filesystem of its own (filled once by the soak)
mkdir -p "$D/.xloop"
truncate -s 20M "$W/xloop-fs.img"
mkfs.ext4 -q -F "$W/xloop-fs.img" >/dev/null 2>&1 || fail_setup "mkfs.ext4 failed"
mount -o loop "$W/xloop-fs.img" "$D/.xloop" || fail_setup "the loop mount of .xloop failed"
mnt=1
rmdir "$D/.xloop/lost+found" 2>/dev/null || true
chown "$U" "$D" "$D/.xloop"
mkdir "$W/out" && chown "$U" "$W/out"

echo "# soak: $MINUTES min, runs of $RUN_SECS s, seed $SEED,$([ "$NODES" -gt 0 ] && echo " $NODES nodes,") in $W"
started=$(date '+%Y-%m-%dT%H:%M:%S')
/usr/bin/python3 tests/soak/soak.py --minutes "$MINUTES" --dir "$W" --study-dir "$D" \
	--xloop "$XBIN" --user "$U" --seed "$SEED" --run-secs "$RUN_SECS" --nodes "$NODES" 8>&- ||
	fail_setup "the harness failed (tests/soak/soak.py)"
chmod -R a+rX "$W" 2>/dev/null
runuser -u "$U" -- env PATH="$PATH" SLURM_CONF="$SLURM_CONF" /usr/bin/python3 tests/soak/check.py \
	--dir "$W" --study-dir "$D" --user "$U" --since "$started" --out "$W/out/checks.json" 8>&-
rc=$?
if [ -n "$bench" ] && [ -s "$W/out/checks.json" ]; then
	/usr/bin/python3 tests/soak/bench.py "$W/out/checks.json" "$W/soak.json" BENCHMARKS.md &&
		echo "# figures written to BENCHMARKS.md (## Chaos soak$([ "$NODES" -gt 0 ] && echo ", ### On many nodes"))"
fi
exit "$rc"
