# Sourced by tests/run.sh, tests/one.sh, tests/matrix.sh, tests/soak/soak.sh and
# bench/search-slurm.sh: the counting of an integration test's result (its last
# line is "RESULT pass=N fail=M skip=K") and take_slot, a test cluster slot.
# shellcheck shell=bash

# The tests run Debian's programs: a python3 earlier on PATH (a pyenv shim
# in root's PATH, say) has none of the packages build.sh installs, and a
# shim costs ten times the CPU of the interpreter it runs (issue 32: it was
# a third of the suite's CPU on a machine that had one).
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$(printf '%s' "$PATH" | tr ':' '\n' |
	grep -v -e pyenv -e '^/usr/s\?bin$' -e '^/s\?bin$' | paste -sd:)
export PATH

# count_result NAME RC OUT [TAG]: print OUT's lines but the RESULT line
# (TAG, when given, after each "ok - "), add its numbers to passed, failed
# and skipped; a test that ends without a RESULT line, or exits non-zero
# with no failure, counts as one failure.
count_result() {
	local name=$1 rc=$2 out=$3 tag=${4:-} line pass fail skip
	if [ -n "$tag" ]; then
		printf '%s\n' "$out" | grep -v '^RESULT ' | sed -E "s/^(not )?ok - /&$tag /"
	else
		printf '%s\n' "$out" | grep -v '^RESULT '
	fi
	line=$(printf '%s\n' "$out" | grep '^RESULT ' | tail -n1)
	if [ -z "$line" ]; then
		echo "not ok - ${tag:+$tag }$name ended without a result (exit $rc)"
		failed=$((failed + 1))
		return
	fi
	eval "${line#RESULT }"
	passed=$((passed + pass)) failed=$((failed + fail)) skipped=$((skipped + skip))
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		echo "not ok - ${tag:+$tag }$name exited $rc"
		failed=$((failed + 1))
	fi
}

# Six cluster slots, each its own directory, ports and lock: slot 0 is the
# one tests/run.sh and bench use; slots 1 to 5 run without cgroups beside it
# (slot 5 only when named: tests/run.sh's second plain lane has it).
# take_slot [N...]: the first free one (of N... in that order, default
# $XLOOP_SLOTS or 0 to 4; waiting for any), its lock held on fd 8
# (close it for daemons: 8>&-); sets slot, exports its XLOOP_TESTCLUSTER_*
# and prints "# cluster slot N" (tests/run.sh reads it).
slot_lock() { [ "$1" -eq 0 ] && echo /tmp/xloop-cluster.lock || echo "/tmp/xloop-cluster-$1.lock"; }
take_slot() {
	local n order=${*:-${XLOOP_SLOTS:-0 1 2 3 4}}
	slot=
	while [ -z "$slot" ]; do
		for n in $order; do
			exec 8>>"$(slot_lock "$n")"
			if flock -n 8; then slot=$n; break; fi
			exec 8>&-
		done
		[ -n "$slot" ] || sleep 2
	done
	if [ "$slot" -ne 0 ]; then
		export XLOOP_TESTCLUSTER_DIR=/tmp/xloop-testcluster-$slot
		export XLOOP_TESTCLUSTER_PORT_OFFSET=$((slot * 100))
		export XLOOP_TESTCLUSTER_CGROUPS=no
	fi
	echo "# cluster slot $slot"
}

# open_path_for_user DIR: the tests run this checkout's xloop as the
# unprivileged test user, so every directory above DIR must let others
# through; one that does not (a clone under `mktemp -d`, mode 0700) gets o+x
# (traverse only, no listing), said on stderr. Root only; nothing else changes.
open_path_for_user() {
	local d=$1
	[ "$(id -u)" -eq 0 ] || return 0
	while [ -n "$d" ] && [ "$d" != / ]; do
		if [ -d "$d" ] && [ $((0$(stat -c %a "$d") & 1)) -eq 0 ]; then
			chmod o+x "$d" && echo "# $d: made traversable (o+x) for the test user" >&2
		fi
		d=${d%/*}
	done
}

# XLOOP_CPU_CGROUPS=1, a developer's measurement (docs/developer.md): every
# lane of tests/run.sh and every test runs in a cgroup v1 cpuacct group of
# its own under /sys/fs/cgroup/cpuacct/xloop-suite/, which counts all the
# CPU of what it started (its exit too, which process accounting misses:
# about half of it), daemons included, Slurm's jobs unless Slurm's own
# cgroups took them (slot 0). Each prints "# cpu NAME S s".
CPU_CG_ROOT=${CPU_CG_ROOT:-/sys/fs/cgroup/cpuacct/xloop-suite}
# cpu_cg_path NAME: the directory of group NAME below this shell's group
cpu_cg_path() {
	local cur
	cur=$(sed -n 's/^[0-9]*:[a-z,]*cpuacct[a-z,]*:\(.*\)$/\1/p' /proc/self/cgroup)
	case $cur in
	/xloop-suite/*) echo "/sys/fs/cgroup/cpuacct$cur/$1" ;;
	*) echo "$CPU_CG_ROOT/$1" ;;
	esac
}
# cpu_cg_enter NAME: move this shell (a subshell: `( cpu_cg_enter X; ... )`)
# into group NAME below the current one
cpu_cg_enter() {
	[ -n "${XLOOP_CPU_CGROUPS:-}" ] || return 0
	local g
	g=$(cpu_cg_path "$1")
	{ mkdir -p "$g" && echo "$BASHPID" >"$g/cgroup.procs"; } 2>/dev/null || true
}
# in_cpu_cg NAME CMD...: CMD in group NAME (a lane of tests/run.sh)
in_cpu_cg() { (cpu_cg_enter "$1" && shift && "$@"); }
# cpu_cg_report NAME: "# cpu NAME S s" for group NAME below the current one
cpu_cg_report() {
	[ -n "${XLOOP_CPU_CGROUPS:-}" ] || return 0
	local g
	g=$(cpu_cg_path "$1")
	[ ! -r "$g/cpuacct.usage" ] ||
		echo "# cpu $1 $(awk '{ printf "%.1f", $1 / 1e9 }' "$g/cpuacct.usage") s"
}
