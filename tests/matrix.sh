#!/usr/bin/env bash
# The version matrix: the core integration tests against Debian's other
# Slurm versions, each a cluster in a chroot (ops/slurm/chroot-cluster.sh):
#   tests/matrix.sh SUITE...    bullseye (20.11), trixie (24.11), sid (26.05)
# For each suite: build the tree unless cached, bring its cluster up, run
# the tests inside the chroot (this checkout is mounted at its own path, so
# ./xloop and build/static-test/xloop, the static build with crash points,
# run there), take the cluster down. Prints each test's lines tagged with
# the version, then "N passed, N failed, N skipped". Needs root; run through
# tests/run.sh (beside the host suite) or ./build.sh matrix.
# XLOOP_MATRIX_TESTS="t1100 t1300" runs only those of each suite's tests.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
CC=ops/slurm/chroot-cluster.sh
export XLOOP_ROOT_DIR=$ROOT XLOOP_BIN=${XLOOP_BIN:-$ROOT/xloop}
export XLOOP_ASAN_BIN=$ROOT/build/static-test/xloop
export XLOOP_TEST_USER=${XLOOP_TEST_USER:-xloopt}

# What each suite runs: "PROFILE TEST..." lines. Submit and chain (t1100),
# every verdict class and cancel (t1000, t1200), doctor (t1300), crash and
# reconcile (t1400), sweeps and the failed-index retry (t1500), why and
# adjust (t1700, plain only); sid also with accounting (sacct's ExitCode
# changed in 25.11); driver.mode scrontab where Slurm ships scrontab (t1975);
# a job id Slurm gives again after a lost controller (t1412) and the loop
# Slurm drives by itself (t1960) on every version; a step waiting on
# segments with Slurm's '?' (t2005) on the oldest and the newest.
# XLOOP_MATRIX_PLAN=ci (what ./build.sh test runs, issue 32: the suite's
# time): on every version submit and chain, crashes (t1400) and the
# verdict classes (t1000) on the oldest and the newest; each other test on one or two
# versions, where it changed most (the whole loop, t1200, and sweeps with
# sid's accounting, the scrontab of trixie, segments on the oldest and the
# newest). The whole plan stays ./build.sh matrix's; it also runs the
# multi-node tests (issue 34: node loss t1870, preemption t1871, a job
# across nodes t1872, a preempted segmented run t1873) on the newest
# version, on 3 nodes of 2 GPUs (profile "accounting-nodes": testcluster.sh
# up --nodes 3 --gpus 2), and on every version (issue 47) a controller back
# from older saved state (t1560: gone.c cancels what xloop is done with)
# and a lost segment's continuation kept off the node (t1875: scontrol
# update ExcNodeList), the latter on bullseye's plain tree ("plain-nodes":
# it has no accounting packages) and with accounting on trixie and sid.
# The stop watcher (issue 45, t1590: the rule and `xloop stop` on the node,
# Slurm's state after a stop, a step not run, a stopped segment) on every
# version, in the whole plan only.
CORE="t1000 t1100 t1200 t1300 t1400 t1412 t1500 t1700 t1960"
plan() {
	if [ "${XLOOP_MATRIX_PLAN:-full}" = ci ]; then
		case $1 in
		bullseye) echo "plain t1000 t1100 t1400 t1412 t2005" ;;
		trixie) echo "plain t1100 t1960 t1975" ;;
		sid)
			echo "accounting t1000 t1100 t1200 t1400 t1500"
			echo "plain t1300 t1412 t1700 t2005"
			;;
		*) return 1 ;;
		esac
		return
	fi
	case $1 in
	bullseye)
		echo "plain $CORE t1560 t1590 t2005"
		echo "plain-nodes t1875"
		;;
	trixie)
		echo "plain $CORE t1560 t1590 t1975"
		echo "accounting-nodes t1875"
		;;
	sid)
		echo "accounting t1000 t1100 t1200 t1300 t1400 t1500"
		echo "plain t1300 t1412 t1560 t1590 t1700 t1960 t1975 t2005"
		echo "accounting-nodes t1870 t1871 t1872 t1873 t1875"
		;;
	*) return 1 ;;
	esac
}

# A profile's cluster: plain or accounting; "-nodes": 3 nodes of 2 GPUs.
up_flags() {
	case $1 in accounting*) echo --accounting ;; esac
	case $1 in *-nodes) echo --nodes 3 --gpus 2 ;; esac
}
# What a test of the profile is told of its cluster (tests/t/lib.sh).
profile_env() {
	case $1 in
	*-nodes) echo "XLOOP_PROFILE=${1%-nodes} XLOOP_NODES=3 XLOOP_GPUS=2" ;;
	*) echo "XLOOP_PROFILE=$1" ;;
	esac
}

passed=0 failed=0 skipped=0
. tests/runlib.sh

# One test inside the suite's chroot; its lines tagged "[VERSION]".
run_in() {
	local suite=$1 version=$2 profile=$3 t=$4 out rc t0=$SECONDS
	echo "# [$version] $t ($profile)"
	# shellcheck disable=SC2046 # NAME=VALUE words
	out=$(env $(profile_env "$profile") "$CC" "$suite" exec bash "$t" 2>&1 6>&-)
	rc=$?
	echo "# [$version] $t took $((SECONDS - t0)) s"
	count_result "$t" "$rc" "$out" "[$version]"
}

# Every profile of one suite, the cluster brought up for each; one run of a
# suite at a time on the machine (its lock's fd 6 is not given to daemons).
run_suite() {
	local suite=$1 version profile tests t out t0=$SECONDS
	local cache=${XLOOP_CHROOT_CACHE:-/var/cache/xloop/chroots}
	mkdir -p "$cache"
	exec 6>>"$cache/.run-$suite.lock"
	flock 6
	if ! "$CC" "$suite" build 6>&-; then
		echo "not ok - $suite: the chroot could not be built"
		failed=$((failed + 1))
		return
	fi
	version=$("$CC" "$suite" version)
	echo "# [$version] $suite tree ready after $((SECONDS - t0)) s"
	while read -r profile tests; do
		local want=
		for t in $tests; do
			case " ${XLOOP_MATRIX_TESTS:-$t} " in *" $t "*) want="$want $t" ;; esac
		done
		[ -n "$want" ] || continue
		# shellcheck disable=SC2046 # one flag a word
		if ! out=$("$CC" "$suite" up $(up_flags "$profile") 2>&1 6>&-); then
			printf '%s\n' "$out" | tail -n 20 | sed 's/^/# /'
			echo "not ok - [$version] the $profile cluster did not come up"
			failed=$((failed + 1))
			continue
		fi
		for t in $want; do
			run_in "$suite" "$version" "$profile" tests/t/$t-*.sh
		done
	done < <(plan "$suite")
	"$CC" "$suite" down >/dev/null 2>&1 6>&- || true
	exec 6>&-
	echo "# [$version] $suite took $((SECONDS - t0)) s"
}

[ $# -gt 0 ] || set -- bullseye trixie sid
[ "$(id -u)" -eq 0 ] || { echo "tests/matrix.sh: run as root" >&2; exit 2; }
[ -x "$XLOOP_ASAN_BIN" ] || { echo "tests/matrix.sh: build $XLOOP_ASAN_BIN first (./build.sh matrix)" >&2; exit 2; }
for suite in "$@"; do
	plan "$suite" >/dev/null || { echo "tests/matrix.sh: unknown suite '$suite'" >&2; exit 2; }
	run_suite "$suite"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
