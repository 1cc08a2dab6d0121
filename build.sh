#!/usr/bin/env bash
# One entry point for building and testing xloop.
#   ./build.sh          the fully static ./xloop
#   ./build.sh asan     an ASan+UBSan build (dynamic) in build/asan/, with unit tests
#   ./build.sh test     both builds, then every unit and integration test,
#                       the version matrix's ci plan (tests/matrix.sh) beside them
#   ./build.sh test --load [N]  the same with N CPU hogs (default: one per
#                       core) beside it: a busy machine, where races show
#   ./build.sh matrix [SUITE...]  only the version matrix, its whole plan: Slurm
#                       20.11, 24.11, 26.05 in chroots (ops/slurm/chroot-cluster.sh)
#   ./build.sh demo     build, start the test cluster, run the example study (ops/demo)
#   ./build.sh bench    build, then the benchmarks (bench/run.sh): rewrites BENCHMARKS.md
#   ./build.sh bench steps    only the runs with steps (issue 28; about 10 min):
#                       rewrites only their part of BENCHMARKS.md
#   ./build.sh bench search   autopilot vs Optuna 3.1/4.1 (TPE, GPSampler) and random
#                       search (bench/search.py; builds build/dev/xloop and a trixie tree)
#   ./build.sh bench stop     the stop rule and autopilot on real learning curves
#                       (bench/curves/) vs Optuna 3.1's TPE with Median and Hyperband
#                       pruners at equal GPU-hours (bench/stop.py; 5 to 16 min)
#   ./build.sh soak [--nodes [N]] [MINUTES]   the chaos soak (tests/soak, default 30 min):
#                       faults on a schedule, checked against sacct and git; figures to
#                       BENCHMARKS.md; --nodes: on N nodes (default 3; a node lost and
#                       back, a drain, a preemption wave)
#   ./build.sh fuzz [SECONDS]   libFuzzer targets (fuzz/README.md), SECONDS each
#   ./build.sh valgrind the unit tests, built without sanitizers, under memcheck
#   ./build.sh install PREFIX   the static xloop into PREFIX/bin, its manual pages
#                       into PREFIX/share/man/man1, bash and zsh completion into
#                       PREFIX/share/{bash-completion/completions,zsh/site-functions}
#   ./build.sh clean    remove build outputs (keeps the dependency cache)
# Installs what it needs with apt-get (as root) when it is missing.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")" && pwd)
# the static libcurl and libgit2 (ops/build/static-deps.sh): machine-wide
# for root, like the version matrix's trees, so a new clone reuses them
if [ "$(id -u)" -eq 0 ]; then
	CACHE=${XLOOP_CACHE:-/var/cache/xloop/build}
	CC_CACHE=/var/cache/xloop/ccache
else
	CACHE=${XLOOP_CACHE:-$ROOT/.cache}
	CC_CACHE=$ROOT/.cache/ccache
fi
JOBS=$(nproc 2>/dev/null || echo 2)
cd "$ROOT"
# ccache keeps every compiled object beside the static libraries
# (CC_CACHE): a new clone compiles only what changed since
# the last build on this machine. Paths are the clone's own, relative, so
# the cache holds across clones (CCACHE_NOHASHDIR); XLOOP_CCACHE=0 turns it off.
ccache_on() {
	[ "${XLOOP_CCACHE:-1}" = 1 ] && command -v ccache >/dev/null || return 0
	export CCACHE=ccache CCACHE_DIR=${CCACHE_DIR:-$CC_CACHE}
	export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
}

# progress, with the seconds since build.sh started
say() { printf '==> [%4d s] %s\n' "$SECONDS" "$*" >&2; }
die() { printf 'build.sh: error: %s\n' "$*" >&2; exit 1; }

BUILD_PKGS="gcc make pkg-config dpkg-dev autoconf automake libtool cmake file ccache
	libsqlite3-dev libjansson-dev libssl-dev zlib1g-dev libpcre2-dev
	libhttp-parser-dev libgit2-dev libcurl4-openssl-dev"
TEST_PKGS="libcmocka-dev git python3 python3-jsonschema valgrind slurm-wlm slurmdbd munge chromium
	mariadb-server util-linux passwd python3-sklearn openssh-server openssh-client sshfs
	clang libclang-rt-14-dev mmdebstrap e2fsprogs python3-optuna sqlite3 strace
	man-db groff-base zsh python3-pandas nodejs"
# The tests' packages installed without their Recommends: python3-torch
# (t1591's training loop on the CPU) recommends 43 more (Qt, OpenCV, GDAL).
LEAN_PKGS="python3-torch"

# Install the packages that are not installed yet (apt-get update once);
# --no-recommends first: without the packages they recommend.
need_pkgs() {
	local missing=() p lean=
	[ "${1:-}" = --no-recommends ] && { lean=--no-install-recommends; shift; }
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		ccache_on
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})"
	fi
	say "installing ${missing[*]}"
	if [ -z "${APT_UPDATED:-}" ]; then
		apt-get update -qq
		APT_UPDATED=1
	fi
	# daemons from these packages must not start on their own: the test
	# cluster starts its own, on its own ports
	local policy=/usr/sbin/policy-rc.d created_policy=
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		created_policy=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $lean \
		"${missing[@]}" >&2
	[ -n "$created_policy" ] && rm -f "$policy"
	ccache_on
}

# 0.1.0, plus the commit when built from a git checkout
version() {
	local rev
	rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) || rev=
	echo "0.1.0${rev:++g$rev}"
}

build_static() {
	need_pkgs $BUILD_PKGS
	say "static libcurl and libgit2 (cached in $CACHE)"
	local prefix
	prefix=$(ops/build/static-deps.sh "$CACHE" | tail -n1)
	[ -f "$prefix/link-flags.txt" ] || die "static dependencies missing in '$prefix'"
	say "linking the static xloop"
	local log=build/static-link.log
	mkdir -p build
	if ! make -j"$JOBS" BUILD=build/static STATIC_PREFIX="$prefix" \
		VERSION="$(version)" build/static/xloop >"$log" 2>&1; then
		cat "$log" >&2
		die "static build failed"
	fi
	# glibc notes that getaddrinfo & co. want its shared NSS modules at run
	# time; the files and dns lookups are built in, so that is expected
	say "link notes: $(grep -c 'statically linked applications' "$log" || true) glibc NSS warnings (see $log)"
	[ -x build/static/xloop ] || die "static link failed"
	cp build/static/xloop xloop.tmp && mv xloop.tmp xloop
	file xloop | grep -q "statically linked" || die "./xloop is not statically linked"
	say "built ./xloop ($(stat -c %s xloop) bytes, statically linked)"
}

# The static xloop with the crash points, for the chroots of the version
# matrix (where the dynamic ASan build's libraries are not).
build_static_test() {
	local prefix
	prefix=$(ops/build/static-deps.sh "$CACHE" | tail -n1)
	say "static test build in build/static-test (crash points, for tests/matrix.sh)"
	if ! make -j"$JOBS" BUILD=build/static-test STATIC_PREFIX="$prefix" TEST_BUILD=1 \
		VERSION="$(version)-test" build/static-test/xloop >build/static-test.log 2>&1; then
		cat build/static-test.log >&2
		die "static test build failed"
	fi
}

build_asan() {
	need_pkgs $BUILD_PKGS libcmocka-dev
	local prefix
	prefix=$(ops/build/static-deps.sh "$CACHE" | tail -n1)
	say "ASan+UBSan build in build/asan (with the static libgit2 and libcurl)"
	make -j"$JOBS" BUILD=build/asan SAN=1 STATIC_PREFIX="$prefix" VERSION="$(version)-asan" \
		build/asan/xloop units >&2
}

# The MCP test's client (tests/t/t0380-mcp.sh): the official TypeScript SDK at
# the version tests/mcp/package-lock.json pins, installed into
# tests/mcp/node_modules once and again when the lock changes. npm comes with
# NodeSource's nodejs; Debian's npm package only where it does not. Without
# the registry the test skips.
mcp_client() {
	command -v npm >/dev/null || need_pkgs npm
	local lock stamp=tests/mcp/node_modules/.xloop-lock
	lock=$(sha256sum <tests/mcp/package-lock.json)
	[ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock" ] && return 0
	say "the MCP SDK's client for the tests (npm ci in tests/mcp)"
	if (cd tests/mcp && npm ci --no-audit --no-fund --loglevel=error >&2); then
		echo "$lock" >"$stamp"
	else
		say "warning: npm ci failed: the MCP client test (t0380) skips"
	fi
}

# Build the libFuzzer targets into build/fuzz and run each for $1 seconds.
build_fuzz() {
	need_pkgs $BUILD_PKGS clang libclang-rt-14-dev
	say "libFuzzer targets in build/fuzz"
	nice -n 19 make -f fuzz/Makefile -j"$JOBS" BUILD=build/fuzz >&2
	fuzz/run.sh "${1:-60}"
}

# Every unit test, built plainly in build/vg, under valgrind's memcheck.
run_valgrind() {
	local t rc failed=0 log
	need_pkgs $BUILD_PKGS libcmocka-dev valgrind git
	say "unit tests for valgrind in build/vg"
	make -j"$JOBS" BUILD=build/vg VG=1 VERSION="$(version)-vg" units >&2
	mkdir -p build/vg/logs
	for t in build/vg/test_*; do
		[ -x "$t" ] || continue
		log=build/vg/logs/${t##*/}.log
		rc=0
		valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite "$t" >"$log" 2>&1 || rc=$?
		if [ "$rc" -eq 0 ]; then
			echo "ok - valgrind ${t##*/}"
		else
			echo "not ok - valgrind ${t##*/} (exit $rc, see $log)"
			grep -E '^==[0-9]+== [A-Z]|\[  FAILED  \]' "$log" | head -n 20
			failed=1
		fi
	done
	return "$failed"
}

# Install ./xloop, its manual pages and its completion under $1, where man
# (PREFIX/bin on PATH: PREFIX/share/man) and bash-completion (PREFIX/share
# in XDG_DATA_DIRS, as /usr/local/share is) find them. All of it comes
# from the binary's own command table.
install_prefix() {
	local p=$1 man comp zfn
	case $p in /*) ;; *) p=$PWD/$p ;; esac
	man=$p/share/man/man1 comp=$p/share/bash-completion/completions
	zfn=$p/share/zsh/site-functions
	install -d "$p/bin" "$man" "$comp" "$zfn"
	install -m 0755 xloop "$p/bin/xloop"
	./xloop help --man-dir "$man"
	./xloop completion bash >"$comp/xloop"
	./xloop completion zsh >"$zfn/_xloop"
	chmod 0644 "$man"/xloop*.1 "$comp/xloop" "$zfn/_xloop"
	say "installed $p/bin/xloop, $(ls "$man"/xloop*.1 | wc -l) manual pages in $man," \
		"completion in $comp/xloop and $zfn/_xloop"
}

# The version matrix's Slurm trees (ops/slurm/chroot-cluster.sh: mmdebstrap,
# mostly downloads and unpacking) are made beside the compiles, one process
# per suite, so the matrix lanes need not wait for them; tests/matrix.sh
# waits for a tree still being made (its lock) or makes it itself. Not
# niced here (XLOOP_TREE_NICE=0): a tree the builds starve is ready only
# long after the lanes start, and the matrix lanes wait for it.
prefetch_trees() {
	[ "$(id -u)" -eq 0 ] && [ "${XLOOP_MATRIX:-1}" != 0 ] || return 0
	local s
	mkdir -p build/matrix
	for s in bullseye trixie sid; do
		XLOOP_TREE_NICE=0 ops/slurm/chroot-cluster.sh "$s" build \
			>"build/matrix/tree-$s.log" 2>&1 &
	done
	say "the matrix's trees are made beside the builds (build/matrix/tree-*.log)"
}

# Start ops/build/static-deps.sh in the background (its log in
# build/static-deps.log); build_static's own call then waits on its lock and
# finds the prefix made, or builds it again and shows why it failed.
prefetch_static_deps() {
	mkdir -p build
	ops/build/static-deps.sh "$CACHE" >/dev/null 2>build/static-deps.log &
	say "static libcurl and libgit2 begin beside the package installs (build/static-deps.log)"
}

case "${1:-static}" in
static) build_static ;;
asan) build_asan ;;
demo)
	need_pkgs $BUILD_PKGS $TEST_PKGS
	build_static
	exec ops/demo/demo.sh
	;;
bench)
	# ./build.sh bench search: autopilot against Optuna 3.1's TPE, Optuna
	# 4.1's (a trixie tree, bench/optuna-chroot.sh) and random search. It
	# runs `xloop test-search` and, for (b), `tick` on the host: the
	# dynamic build in build/dev does, without the static libraries.
	if [ "${2:-}" = search ]; then
		need_pkgs $BUILD_PKGS $TEST_PKGS python3-optuna
		say "xloop in build/dev (for the search benchmark)"
		make -s -j"$JOBS" BUILD=build/dev VERSION="$(version)" build/dev/xloop >&2
		exec /usr/bin/python3 bench/search.py --xloop build/dev/xloop
	fi
	# ./build.sh bench stop: the stop rule and autopilot on the learning
	# curves of bench/curves/ against Optuna 3.1's TPE with MedianPruner and
	# HyperbandPruner at equal GPU-hours (bench/stop.py, issue 46)
	if [ "${2:-}" = stop ]; then
		need_pkgs $BUILD_PKGS $TEST_PKGS python3-optuna
		say "xloop in build/dev (for the stop benchmark)"
		make -s -j"$JOBS" BUILD=build/dev VERSION="$(version)" build/dev/xloop >&2
		shift 2
		exec nice -n 10 /usr/bin/python3 bench/stop.py --xloop build/dev/xloop "$@"
	fi
	need_pkgs $BUILD_PKGS $TEST_PKGS
	build_static
	exec bench/run.sh ${2:+"$2"}
	;;
soak)
	need_pkgs $BUILD_PKGS $TEST_PKGS
	build_static
	build_static_test
	shift
	exec tests/soak/soak.sh --bench "$@"
	;;
fuzz) build_fuzz "${2:-60}" ;;
valgrind) run_valgrind ;;
test)
	if [ "${2:-}" = --load ]; then
		export XLOOP_TEST_LOAD=${3:-$JOBS}
	elif [ -n "${2:-}" ]; then
		die "unknown argument '$2' (./build.sh test [--load [N]])"
	fi
	# the static libraries and the matrix's trees are the longest steps on
	# a machine with nothing cached: they are made while apt-get installs
	# the test packages
	need_pkgs $BUILD_PKGS mmdebstrap
	prefetch_static_deps
	prefetch_trees
	need_pkgs $TEST_PKGS
	need_pkgs --no-recommends $LEAN_PKGS
	build_static
	build_static_test
	build_asan
	mcp_client
	say "libFuzzer targets in build/fuzz (tests/run.sh runs them briefly)"
	make -s -f fuzz/Makefile -j"$JOBS" BUILD=build/fuzz >&2
	exec tests/run.sh
	;;
matrix)
	need_pkgs $BUILD_PKGS $TEST_PKGS
	build_static
	build_static_test
	shift
	exec tests/matrix.sh "$@"
	;;
install)
	[ -n "${2:-}" ] || die "usage: ./build.sh install PREFIX (/usr/local, ~/.local, ...)"
	build_static
	install_prefix "$2"
	;;
clean) make clean ;;
*) die "unknown mode '$1' (use: static, asan, test, matrix, demo, bench, soak, fuzz, valgrind, install, clean)" ;;
esac
