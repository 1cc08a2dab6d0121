#!/usr/bin/env bash
# Every test: the cmocka unit tests (ASan+UBSan build), then the
# integration tests in tests/t/ against the local test cluster, first
# without accounting and then with it (MariaDB + slurmdbd), then the tests
# marked "# gpus: 4" on a node with 4 fake GPUs.
# Run through ./build.sh test, which builds ./xloop and build/asan first.
# Prints cmocka's lines, one line per integration check, and last
# "N passed, N failed"; exits non-zero when anything failed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export XLOOP_ROOT_DIR=$ROOT
export XLOOP_BIN=${XLOOP_BIN:-$ROOT/xloop}
export XLOOP_ASAN_BIN=${XLOOP_ASAN_BIN:-$ROOT/build/asan/xloop}
export XLOOP_SAMPLES=${XLOOP_SAMPLES:-$ROOT/../shared/slurm-samples}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export XLOOP_TEST_USER=${XLOOP_TEST_USER:-xloopt}
export XLOOP_GPUS=1	# fake GPUs on the test cluster's node (a last pass has 4)

passed=0 failed=0 skipped=0
started=$(date +%s)

# cmocka: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
for t in build/asan/test_*; do
	[ -x "$t" ] || continue
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n1)
	s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -n1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		echo "not ok - $t exited $rc"
		failed=$((failed + 1))
	fi
done

# integration tests print "RESULT pass=N fail=M skip=K" last
run_t() {
	local t=$1 out rc line t0=$SECONDS
	echo "# $t (${XLOOP_PROFILE})"
	out=$(bash "$t" 2>&1)
	rc=$?
	echo "# $t took $((SECONDS - t0)) s"
	printf '%s\n' "$out" | grep -v '^RESULT '
	line=$(printf '%s\n' "$out" | grep '^RESULT ' | tail -n1)
	if [ -z "$line" ]; then
		echo "not ok - $t ended without a result (exit $rc)"
		failed=$((failed + 1))
		return
	fi
	eval "${line#RESULT }"
	passed=$((passed + pass))
	failed=$((failed + fail))
	skipped=$((skipped + skip))
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		echo "not ok - $t exited $rc"
		failed=$((failed + 1))
	fi
}

# every fuzz target for a short bounded time (./build.sh fuzz runs longer):
# a crash, a leak or a failed rewrite property fails the run
if [ -x build/fuzz/fuzz_sacct ]; then
	t0=$SECONDS
	if out=$(fuzz/run.sh "${XLOOP_FUZZ_SECONDS:-2}" 2>&1); then
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "ok - fuzz: every target ${XLOOP_FUZZ_SECONDS:-2} s, no finding"
		passed=$((passed + 1))
	else
		printf '%s\n' "$out"
		echo "not ok - fuzz: a target found something (build/fuzz/artifacts/)"
		failed=$((failed + 1))
	fi
	echo "# fuzz took $((SECONDS - t0)) s"
else
	echo "ok - fuzz # skip build/fuzz is not built (./build.sh test builds it)"
	skipped=$((skipped + 1))
fi

if [ "$(id -u)" -eq 0 ]; then
	id "$XLOOP_TEST_USER" >/dev/null 2>&1 || useradd -m "$XLOOP_TEST_USER"
fi

export XLOOP_PROFILE=none
for t in tests/t/t0*.sh; do
	run_t "$t"
done

cluster_up() {
	if ! ops/slurm/testcluster.sh up "$@"; then
		echo "not ok - test cluster did not come up ($*)"
		failed=$((failed + 1))
		return 1
	fi
	eval "$(ops/slurm/testcluster.sh env)"
	ops/slurm/testcluster.sh adduser "$XLOOP_TEST_USER" >/dev/null
}

if [ "$(id -u)" -ne 0 ]; then
	echo "# integration tests against Slurm need root (they start the test cluster): skipped"
	skipped=$((skipped + 1))
else
	export XLOOP_PROFILE=plain
	if cluster_up; then
		for t in tests/t/t[1-9]*.sh; do
			run_t "$t"
		done
	fi
	export XLOOP_PROFILE=accounting
	if cluster_up --accounting; then
		for t in tests/t/t[1-9]*.sh; do
			run_t "$t"
		done
	fi
	# tests marked "# gpus: 4" (lanes) once more on a node with 4 fake GPUs
	export XLOOP_GPUS=4
	if cluster_up --accounting --gpus 4; then
		for t in $(grep -l '^# gpus: 4' tests/t/t[1-9]*.sh); do
			run_t "$t"
		done
	fi
	export XLOOP_GPUS=1
	ops/slurm/testcluster.sh down >/dev/null 2>&1 || true
fi

echo "# took $(($(date +%s) - started)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
