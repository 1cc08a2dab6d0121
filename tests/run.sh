#!/usr/bin/env bash
# Every test, in lanes that run side by side from the start: the
# integration tests in tests/t/ against the local test cluster without
# accounting (in the foreground); beside them the slowest plain-only tests
# (PLAIN_ASIDE, PLAIN_ASIDE2, and PLAIN_ASIDE3 after the 4-GPU lane) on
# cluster slots of their own, the tests with
# accounting (MariaDB + slurmdbd) on another (tests/one.sh's next slot), the
# tests marked "# nodes: 3" on a 3-node cluster, then those marked
# "# gpus: 4" on a node with 4 fake GPUs, the short chaos
# soak (tests/soak/soak.sh 3, its own slot), the lane that needs no cluster
# (the cmocka unit tests of the ASan+UBSan build, the t0* tests;
# build/t/local.log), the fuzz targets briefly beside it (build/t/fuzz.log),
# and the version matrix (tests/matrix.sh:
# the Slurm versions in chroots, each its own cluster on its own ports;
# XLOOP_MATRIX=0 skips it; its lanes below). A background lane's lines are
# printed when it ends; the longest lane sets the time (each prints its
# tests' seconds).
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
export XLOOP_GPUS=1	# fake GPUs on the test cluster's node (the gpu4 lane has 4)

passed=0 failed=0 skipped=0
started=$(date +%s)
# everything printed is kept in build/t/run.log too: the failures are
# repeated from it last, where a CI record that keeps only the tail sees them
mkdir -p build/t
exec > >(tee build/t/run.log) 2>&1

# XLOOP_CPU_CGROUPS=1: each lane and test in a cpuacct group of its own
# (tests/runlib.sh); at the end each lane's CPU and the machine's
cpu_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
cpu_t0=$(cpu_busy)
if [ -n "${XLOOP_CPU_CGROUPS:-}" ]; then
	export CPU_CG_ROOT=/sys/fs/cgroup/cpuacct/xloop-suite/run-$$
	mkdir -p "$CPU_CG_ROOT" || exit 1
fi
cpu_cg_lanes() {
	[ -n "${XLOOP_CPU_CGROUPS:-}" ] || return 0
	local g
	for g in "$CPU_CG_ROOT"/*/; do
		g=${g%/}
		echo "# cpu lane ${g##*/}: $(awk '{ printf "%.0f", $1 / 1e9 }' "$g/cpuacct.usage") s"
	done
	echo "# cpu of the machine in the run: $((($(cpu_busy) - cpu_t0) / $(getconf CLK_TCK))) s busy"
}

# Load mode (./build.sh test --load, issue 32): XLOOP_TEST_LOAD=N CPU hogs
# run beside the whole suite, as a busy machine would, so a test that
# leans on timing fails here before CI finds it. Each stops by itself
# after two hours at the latest; the suite stops them when it ends.
hogs=()
if [ "${XLOOP_TEST_LOAD:-0}" -gt 0 ]; then
	for _ in $(seq 1 "$XLOOP_TEST_LOAD"); do
		timeout 7200 sh -c 'while :; do :; done' 7>&- &
		hogs+=($!)
	done
	trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
	echo "# load mode: $XLOOP_TEST_LOAD CPU hogs beside the suite"
fi
# LeakSanitizer's check at every exit of the ASan xloop (it stops the
# process with a tracer, 32 of the 69 ms a start costs here) runs in the
# lanes that run each test first: the units, the fuzz targets, t0*, the
# host cluster's and the plain one beside it. The accounting, nodes and
# 4-GPU lanes, which run the same code again on another cluster, leave it
# out (XLOOP_LEAKS_EVERYWHERE=1 keeps it there too).
if [ -n "${XLOOP_LEAKS_EVERYWHERE:-}" ]; then
	AGAIN_ASAN=$ASAN_OPTIONS
else
	AGAIN_ASAN=${ASAN_OPTIONS//detect_leaks=1/detect_leaks=0}
fi
# The tests that take their xloop from XLOOP_ASAN_BIN (the crash tests, the
# steps and sweeps: the suite's most xloop starts, 50-110 ms of CPU each in
# the ASan build) run it under ASan in the plain lanes; the lanes that run
# them again (accounting, 3 nodes, 4 GPUs) give them the static build with
# the same crash points, as the version matrix does (a start there costs
# about a tenth; XLOOP_AGAIN_ASAN_BIN=$XLOOP_ASAN_BIN keeps ASan there too)
AGAIN_BIN=${XLOOP_AGAIN_ASAN_BIN:-$ROOT/build/static-test/xloop}
[ -x "$AGAIN_BIN" ] || AGAIN_BIN=$XLOOP_ASAN_BIN
# tests run beside the host cluster's lane (see below), in two lanes, each
# on a cluster slot of its own from the start (the second waited for the
# nodes lane's slot once, and ran alone at the end for 2 minutes);
# XLOOP_PLAIN_ASIDE="" and XLOOP_PLAIN_ASIDE2="" run them on the host
# cluster. Chosen so that the plain lanes end together (issue 32; t1590
# and t1230 left the host lane at 89fe843, whose last minute it ran alone)
PLAIN_ASIDE="t1430 t1520 t1540 t1550 t1600 t1961 t1962 t2010"
PLAIN_ASIDE2="t1960 t1963 t2005 t1420 t1700 t1240 t1591 t1590"
# and a third on the 4-GPU lane's slot once that lane is done (about 6
# minutes in, with 5 minutes to the end of the others: the host lane's
# longest tests that need no cgroups; XLOOP_PLAIN_ASIDE3="" keeps them there)
PLAIN_ASIDE3="t1400 t1530 t1440 t1610 t1230"
# and after them, on that slot, these tests' accounting profile (not the
# accounting lane's, the longest then; XLOOP_ACCT_ASIDE="" keeps them there)
ACCT_ASIDE="t2020"

# the cmocka unit tests: "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s), listed below:"
units_run() {
	local t out rc p f s
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
}

# integration tests print "RESULT pass=N fail=M skip=K" last
. tests/runlib.sh
run_t() {
	local t=$1 out rc t0=$SECONDS
	echo "# $t (${XLOOP_PROFILE})"
	out=$(cpu_cg_enter "${t##*/}" && bash "$t" 2>&1 7>&-)
	rc=$?
	echo "# $t took $((SECONDS - t0)) s"
	cpu_cg_report "${t##*/}"
	count_result "$t" "$rc" "$out"
}

# every fuzz target for a short bounded time (./build.sh fuzz runs longer):
# a crash, a leak or a failed rewrite property fails the run
fuzz_run() {
	local t0 out
	if [ -x build/fuzz/fuzz_sacct ]; then
		t0=$SECONDS
		if out=$(XLOOP_FUZZ_TIMEOUT=${XLOOP_FUZZ_TIMEOUT:-120} fuzz/run.sh "${XLOOP_FUZZ_SECONDS:-2}" 2>&1); then
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
}

# The lane that needs no cluster: the unit tests, the t0* tests (started
# before any cluster's SLURM_CONF is set: they need no Slurm); its own
# counts on its last line.
local_lane() {
	local t
	passed=0 failed=0 skipped=0
	units_run
	export XLOOP_PROFILE=none
	for t in tests/t/t0*.sh; do
		run_t "$t"
	done
	echo "$passed passed, $failed failed, $skipped skipped"
}

# The fuzz targets beside it, niced (fuzz/run.sh), in a lane of their own:
# in the local lane they held the t0* tests back (379 s under load).
fuzz_lane() {
	passed=0 failed=0 skipped=0
	fuzz_run
	echo "$passed passed, $failed failed, $skipped skipped"
}

# A background lane's log: its lines, then its counts added to ours.
lane_result() {
	local log=$1 name=$2 line
	grep -v '^[0-9]* passed, ' "$log"
	line=$(grep '^[0-9]* passed, ' "$log" | tail -n1)
	if [ -z "$line" ]; then
		echo "not ok - $name ended without a result"
		failed=$((failed + 1))
		return
	fi
	set -- $line
	passed=$((passed + $1)) failed=$((failed + $3)) skipped=$((skipped + $5))
}

# join_lane PID LOG NAME WHAT: wait for a background lane, say how long
# it was waited for, then its lines and counts (lane_result LOG NAME)
joined=()
join_lane() {
	local t0=$SECONDS
	wait "$1"
	joined+=("$2")
	echo "# $4 (waited $((SECONDS - t0)) s more, log $2)"
	lane_result "$2" "$3"
}

# slot_down LOG: stop the cluster a tests/one.sh lane used (the slot it took
# is in its first line), under that slot's lock: a tests/one.sh elsewhere on
# the machine may have taken the slot since (then it is left alone)
slot_down() {
	local slot
	slot=$(sed -n 's/^# cluster slot \([0-9]\)$/\1/p' "$1" | head -n1)
	if [ -n "$slot" ] && [ "$slot" -ne 0 ]; then
		(
			flock -n 9 || exit 0
			XLOOP_TESTCLUSTER_DIR=/tmp/xloop-testcluster-$slot \
				XLOOP_TESTCLUSTER_PORT_OFFSET=$((slot * 100)) \
				ops/slurm/testcluster.sh down >/dev/null 2>&1 9>&- || true
		) 9>>"/tmp/xloop-cluster-$slot.lock"
	fi
}

cluster_up() {
	if ! ops/slurm/testcluster.sh up "$@" 7>&-; then
		echo "not ok - test cluster did not come up ($*)"
		failed=$((failed + 1))
		return 1
	fi
	eval "$(ops/slurm/testcluster.sh env)"
	ops/slurm/testcluster.sh adduser "$XLOOP_TEST_USER" >/dev/null 7>&-
}

if [ "$(id -u)" -eq 0 ]; then
	id "$XLOOP_TEST_USER" >/dev/null 2>&1 || useradd -m "$XLOOP_TEST_USER"
	open_path_for_user "$ROOT"
fi

# the version matrix, in the background until the end: its suites in lanes
# that run side by side, the suites of a lane one after the other (each
# suite about 5 min): XLOOP_MATRIX_LANES, lanes apart by spaces, suites of
# a lane joined by "+" (default "bullseye+trixie sid": two lanes, about 10
# and 5 min); XLOOP_MATRIX_PARALLEL=1: one lane per suite (about 5 min, at
# three times the load); XLOOP_MATRIX_SUITES: those suites in one lane;
# the matrix's ci plan (tests/matrix.sh; XLOOP_MATRIX_PLAN=full: all of it)
matrix_suites=()
if [ "$(id -u)" -eq 0 ] && [ "${XLOOP_MATRIX:-1}" != 0 ]; then
	mkdir -p build/matrix
	if [ -n "${XLOOP_MATRIX_PARALLEL:-}" ]; then
		lanes=${XLOOP_MATRIX_SUITES:-bullseye trixie sid}
	elif [ -n "${XLOOP_MATRIX_SUITES:-}" ]; then
		lanes=${XLOOP_MATRIX_SUITES// /+}
	else
		lanes=${XLOOP_MATRIX_LANES:-bullseye+trixie sid}
	fi
	for lane in $lanes; do
		# shellcheck disable=SC2086 # one suite per word
		XLOOP_MATRIX_PLAN=${XLOOP_MATRIX_PLAN:-ci} in_cpu_cg "matrix-$lane" tests/matrix.sh ${lane//+/ } \
			>"build/matrix/$lane.log" 2>&1 &
		matrix_suites+=("$lane:$!")
	done
fi

mkdir -p build/t
# the lane that needs no cluster, beside the cluster lanes (it is started
# before any of them sets SLURM_CONF)
in_cpu_cg local local_lane >build/t/local.log 2>&1 &
local_pid=$!
in_cpu_cg fuzz fuzz_lane >build/t/fuzz.log 2>&1 &
fuzz_pid=$!
if [ "$(id -u)" -ne 0 ]; then
	echo "# integration tests against Slurm need root (they start the test cluster): skipped"
	skipped=$((skipped + 1))
else
	# the host cluster is slot 0 of tests/one.sh: hold its lock (fd 7, closed
	# for everything started under it, so no daemon keeps it)
	exec 7>>/tmp/xloop-cluster.lock
	flock 7
	# Each lane its cluster slot (tests/runlib.sh's take_slot) unless
	# XLOOP_SLOTS says otherwise: seven lanes share slots 1-5, and the
	# accounting lane, the longest, must not wait for one (it did, 330 s, when
	# they raced for them); the second plain lane has slot 5; the 4-GPU lane
	# and the lanes after it take the nodes lane's slot or the soak's as they
	# end
	slots() { printf '%s' "${XLOOP_SLOTS:-$1}"; }
	# the accounting profile runs beside the plain one, on slot 1 (its own
	# ports; no cgroups there, so the out-of-memory checks run in the plain
	# profile only)
	acct=() acct_aside=()
	for t in tests/t/t[1-9]*.sh; do
		n=${t##*/}
		case " ${XLOOP_ACCT_ASIDE-$ACCT_ASIDE} " in
		*" ${n%%-*} "*) acct_aside+=("$t") ;;
		*) acct+=("$t") ;;
		esac
	done
	XLOOP_SLOTS=$(slots 1) ASAN_OPTIONS=$AGAIN_ASAN XLOOP_ASAN_BIN=$AGAIN_BIN in_cpu_cg accounting tests/one.sh --accounting "${acct[@]}" >build/t/accounting.log 2>&1 7>&- &
	accounting_pid=$!
	# the short chaos soak beside them, on a cluster slot of its own
	XLOOP_SLOTS=$(slots 4) in_cpu_cg soak tests/soak/soak.sh "${XLOOP_SOAK_MINUTES:-3}" >build/t/soak.log 2>&1 7>&- &
	soak_pid=$!
	# the slowest tests that run in the plain profile only and check no
	# out-of-memory kill (cgroups, slot 0 only): beside the host cluster's
	# lane, plain, on a cluster slot of their own
	aside=() aside2=() aside3=()
	for t in ${XLOOP_PLAIN_ASIDE-$PLAIN_ASIDE}; do
		aside+=(tests/t/"$t"-*.sh)
	done
	for t in ${XLOOP_PLAIN_ASIDE3-$PLAIN_ASIDE3}; do
		aside3+=(tests/t/"$t"-*.sh)
	done
	for t in ${XLOOP_PLAIN_ASIDE2-$PLAIN_ASIDE2}; do
		aside2+=(tests/t/"$t"-*.sh)
	done
	if [ ${#aside[@]} -gt 0 ]; then
		XLOOP_SLOTS=$(slots 2) in_cpu_cg aside tests/one.sh "${aside[@]}" >build/t/plain-aside.log 2>&1 7>&- &
		aside_pid=$!
	fi
	if [ ${#aside2[@]} -gt 0 ]; then
		XLOOP_SLOTS=$(slots 5) in_cpu_cg aside2 tests/one.sh "${aside2[@]}" >build/t/plain-aside2.log 2>&1 7>&- &
		aside2_pid=$!
	fi
	# the tests marked "# nodes: 3" (node loss, preemption: issue 34) on a
	# multi-node cluster of their own slot, accounting on (they skip
	# themselves on the one-node clusters of the other lanes)
	nodes_tests=$(grep -l '^# nodes: 3' tests/t/t[1-9]*.sh)
	if [ -n "$nodes_tests" ]; then
		# shellcheck disable=SC2086 # one test per word
		XLOOP_SLOTS=$(slots 3) ASAN_OPTIONS=$AGAIN_ASAN XLOOP_ASAN_BIN=$AGAIN_BIN in_cpu_cg nodes tests/one.sh --accounting --nodes 3 --gpus 2 $nodes_tests >build/t/nodes.log 2>&1 7>&- &
		nodes_pid=$!
	fi
	# the lanes after them take the nodes lane's slot or the soak's: started
	# once those two lanes hold their slots (else one could take it first)
	for _ in $(seq 1 600); do
		grep -q '^# cluster slot' build/t/soak.log 2>/dev/null &&
			{ [ -z "${nodes_pid:-}" ] || grep -q '^# cluster slot' build/t/nodes.log; } && break
		sleep 0.1
	done
	# the tests marked "# gpus: 4" (lanes) once more, on a node with 4 fake
	# GPUs, plain: one.sh waits for a free slot (the nodes lane's, soon)
	gpu4_tests=$(grep -l '^# gpus: 4' tests/t/t[1-9]*.sh)
	# then the third plain lane on the slot it leaves, then ACCT_ASIDE with
	# accounting there (in the same background job: join_lane of gpu4 waits
	# for all three)
	if [ -n "$gpu4_tests" ] || [ ${#aside3[@]} -gt 0 ] || [ ${#acct_aside[@]} -gt 0 ]; then
		# shellcheck disable=SC2086 # one test per word
		{
			[ -z "$gpu4_tests" ] || XLOOP_SLOTS=$(slots "3 4") ASAN_OPTIONS=$AGAIN_ASAN XLOOP_ASAN_BIN=$AGAIN_BIN in_cpu_cg gpu4 tests/one.sh --gpus 4 $gpu4_tests >build/t/gpu4.log 2>&1
			[ ${#aside3[@]} -eq 0 ] || XLOOP_SLOTS=$(slots "3 4") in_cpu_cg aside3 tests/one.sh "${aside3[@]}" >build/t/plain-aside3.log 2>&1
			[ ${#acct_aside[@]} -eq 0 ] || XLOOP_SLOTS=$(slots "3 4") ASAN_OPTIONS=$AGAIN_ASAN XLOOP_ASAN_BIN=$AGAIN_BIN in_cpu_cg acct-aside tests/one.sh --accounting "${acct_aside[@]}" >build/t/accounting-aside.log 2>&1
		} 7>&- &
		gpu4_pid=$!
	fi
	export XLOOP_PROFILE=plain
	cpu_cg_enter host	# this shell, from here on (XLOOP_CPU_CGROUPS)
	if cluster_up; then
		for t in tests/t/t[1-9]*.sh; do
			case " ${aside[*]} ${aside2[*]} ${aside3[*]} " in *" $t "*) continue ;; esac
			run_t "$t"
		done
	fi
	ops/slurm/testcluster.sh down >/dev/null 2>&1 7>&- || true
	exec 7>&-
	join_lane "$accounting_pid" build/t/accounting.log accounting "accounting profile"
	slot_down build/t/accounting.log
	if [ -n "${aside_pid:-}" ]; then
		join_lane "$aside_pid" build/t/plain-aside.log "plain beside" \
			"plain, beside the host cluster"
		slot_down build/t/plain-aside.log
	fi
	if [ -n "${aside2_pid:-}" ]; then
		join_lane "$aside2_pid" build/t/plain-aside2.log "plain beside (2)" \
			"plain, beside the host cluster (2)"
		slot_down build/t/plain-aside2.log
	fi
	join_lane "$soak_pid" build/t/soak.log soak "chaos soak"
	if [ -n "${nodes_pid:-}" ]; then
		join_lane "$nodes_pid" build/t/nodes.log nodes "3 nodes, accounting"
		slot_down build/t/nodes.log
	fi
	if [ -n "${gpu4_pid:-}" ] && [ -n "$gpu4_tests" ]; then
		join_lane "$gpu4_pid" build/t/gpu4.log "4 GPUs" "4 GPUs, plain"
		slot_down build/t/gpu4.log
	fi
	[ -n "$gpu4_tests" ] || [ -z "${gpu4_pid:-}" ] || wait "$gpu4_pid"
	if [ ${#aside3[@]} -gt 0 ]; then
		joined+=(build/t/plain-aside3.log)
		echo "# plain, beside the host cluster (3) (after the 4-GPU lane, log build/t/plain-aside3.log)"
		lane_result build/t/plain-aside3.log "plain beside (3)"
		slot_down build/t/plain-aside3.log
	fi
	if [ ${#acct_aside[@]} -gt 0 ]; then
		joined+=(build/t/accounting-aside.log)
		echo "# accounting, after them (log build/t/accounting-aside.log)"
		lane_result build/t/accounting-aside.log "accounting beside"
		slot_down build/t/accounting-aside.log
	fi
fi

join_lane "$local_pid" build/t/local.log "units, t0*" "units, t0*"
join_lane "$fuzz_pid" build/t/fuzz.log fuzz "the fuzz targets"

# the matrix lanes: their lines, then their counts
for lane in ${matrix_suites[@]+"${matrix_suites[@]}"}; do
	join_lane "${lane#*:}" "build/matrix/${lane%%:*}.log" "matrix ${lane%%:*}" \
		"matrix ${lane%%:*}"
done

echo "# took $(($(date +%s) - started)) s"
cpu_cg_lanes
if [ "$failed" -gt 0 ]; then
	echo "# the failures again:"
	grep -hE '^not ok|^\[  FAILED  \] [^0-9]' build/t/run.log "${joined[@]}" |
		awk '!seen[$0]++' | sed 's/^/# /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
