#!/usr/bin/env bash
# Run some integration tests against the shared local test cluster:
#   tests/one.sh [--accounting] [--gpus N] [--nodes N] tests/t/t1200-loop.sh [more tests...]
# --nodes N: the multi-node profile (testcluster.sh up --nodes N, nodes
# node1..nodeN); a test marked "# nodes: N" skips itself on fewer. A test
# marked "# gpus: A,B,.." (one count a node, as many as --nodes) runs on
# nodes of those GPUs: the cluster comes up so for it (XLOOP_GPUS=A,B,..),
# and as asked again for the next test that is not so marked.
# XLOOP_SLOTS="4" takes only slot 4 (a session's side work beside a full suite).
# Holds a cluster slot's lock for the whole run (clusters are shared by
# everything on the machine; see the slots below), brings the cluster up with
# the profile asked for, and prints each test's lines and seconds ("# T (PROFILE) took
# N s") and a last "N passed, N failed" line.
# t0* tests need no cluster: run them directly with tests/one.sh as well.
# Daemons and tests run with the lock fd closed, so nothing started here keeps it.
# Build first (./build.sh and ./build.sh asan).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
profile=plain up= gpus=1 nodes=1
while [ $# -gt 0 ]; do
	case $1 in
	--accounting) profile=accounting up="$up --accounting"; shift ;;
	--gpus) gpus=${2:-}; shift 2 || shift ;;
	--nodes) nodes=${2:-}; up="$up --nodes $nodes"; shift 2 || shift ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: tests/one.sh [--accounting] [--gpus N] [--nodes N] TEST..." >&2; exit 2; }
export XLOOP_GPUS=$gpus	# fake GPUs on the test cluster's node (each node's)
export XLOOP_NODES=$nodes	# nodes of the test cluster (node1..nodeN when > 1)
export XLOOP_ROOT_DIR=$ROOT XLOOP_BIN=${XLOOP_BIN:-$ROOT/xloop}
export XLOOP_ASAN_BIN=${XLOOP_ASAN_BIN:-$ROOT/build/asan/xloop}
export XLOOP_SAMPLES=${XLOOP_SAMPLES:-$ROOT/../shared/slurm-samples}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export XLOOP_TEST_USER=${XLOOP_TEST_USER:-xloopt}
id "$XLOOP_TEST_USER" >/dev/null 2>&1 || useradd -m "$XLOOP_TEST_USER"

. tests/runlib.sh
open_path_for_user "$ROOT"
needs_cluster=
for t in "$@"; do case ${t##*/} in t0*) ;; *) needs_cluster=1 ;; esac; done

# up_cluster GPUS: the cluster of the options asked, with GPUS (N or A,B,..)
up_cluster() {
	# shellcheck disable=SC2086 # one option per word
	ops/slurm/testcluster.sh up $up --gpus "$1" >/dev/null 8>&- || { echo "not ok - test cluster did not come up"; exit 1; }
	eval "$(ops/slurm/testcluster.sh env)"
	ops/slurm/testcluster.sh adduser "$XLOOP_TEST_USER" >/dev/null 8>&-
	export XLOOP_GPUS=$1
}

# test_gpus TEST: its "# gpus: A,B,.." when it names a count for each of the
# --nodes nodes, else the GPUs asked
test_gpus() {
	local w
	w=$(sed -n 's/^# gpus: \([1-9][0-9]*\(,[1-9][0-9]*\)\{1,\}\)$/\1/p' "$1" | head -n 1)
	if [ -n "$w" ] && [ "$(tr -cd , <<<"$w" | wc -c)" -eq $((nodes - 1)) ]; then
		echo "$w"
	else
		echo "$gpus"
	fi
}

body() {
	local layout=$gpus
	[ -z "$needs_cluster" ] || up_cluster "$gpus"
	local passed=0 failed=0 skipped=0 t out rc t0
	for t in "$@"; do
		case ${t##*/} in t0*) XLOOP_PROFILE=none ;; *) XLOOP_PROFILE=$profile ;; esac
		if [ "$XLOOP_PROFILE" != none ] && [ "$(test_gpus "$t")" != "$layout" ]; then
			layout=$(test_gpus "$t")
			up_cluster "$layout"
		fi
		export XLOOP_PROFILE
		t0=$SECONDS
		out=$(cpu_cg_enter "${t##*/}" && bash "$t" 2>&1 8>&-)
		rc=$?
		count_result "$t" "$rc" "$out"
		echo "# $t ($XLOOP_PROFILE) took $((SECONDS - t0)) s"
		cpu_cg_report "${t##*/}"
	done
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
}

# A cluster slot of five (tests/runlib.sh's take_slot), when a test needs one.
[ -z "$needs_cluster" ] || take_slot
body "$@"
