#!/usr/bin/env bash
# chroot-cluster.sh - the test cluster on another Slurm version: a Debian
# suite's Slurm in a chroot, run by ops/slurm/testcluster.sh inside it.
#
#   chroot-cluster.sh SUITE build              make (or reuse) the cached tree
#   chroot-cluster.sh SUITE up [--accounting]  build, mount, start the cluster
#   chroot-cluster.sh SUITE down               stop it and unmount
#   chroot-cluster.sh SUITE status             testcluster.sh status inside
#   chroot-cluster.sh SUITE env                exports for a client inside
#   chroot-cluster.sh SUITE exec CMD...        run CMD inside, SLURM_CONF set
#   chroot-cluster.sh SUITE version            the suite's Slurm version
#   chroot-cluster.sh list                     the suites and their ports
#
# Suites: bullseye (Slurm 20.11), trixie (24.11), sid (26.05). Trees are made
# with mmdebstrap from the mirror the host's apt sources name and cached in
# ${XLOOP_CHROOT_CACHE:-/var/cache/xloop/chroots}/SUITE-HASH, HASH being a
# hash of the package list, so every clone on the machine shares them and a
# changed list builds a new tree. `up` bind-mounts /dev, /proc, /sys and this
# checkout (at its own path) into the tree, copies /etc/hosts in, adds the
# test user (XLOOP_TEST_USER, default xloopt, with the host's uid), and runs
# testcluster.sh inside with the suite's own ports, its own munge key and
# socket, no cgroups, and its cluster directory /var/lib/xloop-cluster-SUITE
# (inside the tree). Everything runs as root.
set -euo pipefail
umask 022

readonly PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
ROOT=$(cd "$HERE/../.." && pwd)
readonly ROOT
readonly CACHE=${XLOOP_CHROOT_CACHE:-/var/cache/xloop/chroots}
readonly TEST_USER=${XLOOP_TEST_USER:-xloopt}
# Bumped when the tree's setup changes in a way the package list does not show.
readonly TREE_FORMAT=1

# Packages of every tree: Slurm, munge, and what the integration tests use.
readonly BASE_PKGS="slurmctld slurmd slurm-client munge bash python3
python3-jsonschema git util-linux passwd procps hostname mawk coreutils
findutils grep sed sqlite3"
# The suites where accounting is tested add these.
readonly ACCT_PKGS="slurmdbd mariadb-server"

msg() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

usage() {
	sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

# The suite's port offset (testcluster.sh's XLOOP_TESTCLUSTER_PORT_OFFSET:
# slurmctld 16817+N, slurmd 16818+N, slurmdbd 16819+N, MariaDB 13306+N;
# tests/one.sh's extra slots use 100 and 200) and whether it has accounting.
suite_info() {
	case $1 in
	bullseye) echo "10 noacct" ;;
	trixie) echo "20 acct" ;;
	sid) echo "30 acct" ;;
	*) return 1 ;;
	esac
}

# The Debian mirror of the host's own apt sources (deb822 or one-line).
host_mirror() {
	local f uri=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '
			/^[ \t]*$/ { if (deb && u != "" && s !~ /security/) { print u; exit } deb = 0; u = ""; s = ""; next }
			/^Types:/ && / deb( |$)/ { deb = 1 }
			/^URIs:/ { u = $2 }
			/^Suites:/ { s = $0 }
			END { if (deb && u != "" && s !~ /security/) print u }' "$f" | head -n1)
		[ -n "$uri" ] && break
	done
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }')
	fi
	[ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list*"
	printf '%s\n' "$uri"
}

# The packages of SUITE's tree, one line.
suite_pkgs() {
	local pkgs=$BASE_PKGS
	[[ $(suite_info "$1") == *' acct' ]] && pkgs="$pkgs $ACCT_PKGS"
	echo $pkgs
}

# The cached tree of SUITE (it may not exist yet).
tree_of() {
	local hash
	hash=$(printf '%s\n' "$1" "$TREE_FORMAT" "$(suite_pkgs "$1")" | sha256sum | cut -c1-12)
	printf '%s/%s-%s\n' "$CACHE" "$1" "$hash"
}

# True when something is mounted at or below directory $1.
has_mounts() {
	awk -v d="$1" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' \
		/proc/self/mountinfo
}

# Build SUITE's tree unless the cache has it; old trees of SUITE go.
cmd_build() {
	local suite=$1 tree tmp old t0=$SECONDS
	tree=$(tree_of "$suite")
	if [ -f "$tree/etc/xloop-chroot" ]; then
		return 0
	fi
	command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (apt-get install mmdebstrap)"
	mkdir -p "$CACHE"
	# one builder per suite; the lock's fd is closed again below, so no
	# daemon started later by this process holds it
	exec 7>>"$CACHE/.lock-$suite"
	flock 7
	if [ -f "$tree/etc/xloop-chroot" ]; then
		exec 7>&-
		return 0
	fi
	tmp=$tree.tmp.$$
	msg "building the $suite tree in $tree (mmdebstrap)"
	if ! nice -n "${XLOOP_TREE_NICE:-10}" mmdebstrap --quiet --variant=apt --components=main \
		--include="$(suite_pkgs "$suite" | tr ' ' ,)" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$suite" "$tmp" "$(host_mirror)" >&2; then
		has_mounts "$tmp" || rm -rf "$tmp"
		die "mmdebstrap failed for $suite"
	fi
	printf 'suite=%s\nslurm=%s\n' "$suite" \
		"$(chroot "$tmp" slurmd -V | sed 's/.* //')" >"$tmp/etc/xloop-chroot"
	mv "$tmp" "$tree"
	for old in "$CACHE/$suite"-*; do
		[ "$old" = "$tree" ] || [ ! -d "$old" ] && continue
		has_mounts "$old" || rm -rf "$old"
	done
	exec 7>&-
	msg "built $tree in $((SECONDS - t0)) s"
}

# Mount what the cluster and the tests need; idempotent.
mount_all() {
	local tree=$1 d
	for d in dev proc sys; do
		mountpoint -q "$tree/$d" && continue
		case $d in
		proc) mount -t proc proc "$tree/proc" ;;
		sys) mount --bind /sys "$tree/sys" && mount -o remount,bind,ro "$tree/sys" ;;
		dev) mount --bind /dev "$tree/dev" ;;
		esac
	done
	mkdir -p "$tree$ROOT"
	mountpoint -q "$tree$ROOT" || mount --bind "$ROOT" "$tree$ROOT"
	cp /etc/hosts "$tree/etc/hosts"
	hostname >"$tree/etc/hostname"
}

# Undo mount_all.
umount_all() {
	local tree=$1 d
	for d in "$ROOT" /sys /proc /dev; do
		if mountpoint -q "$tree$d"; then
			umount "$tree$d" || umount -l "$tree$d"
		fi
	done
}

# The test user inside, with the host's uid when the host has one.
add_user() {
	local tree=$1 uid
	chroot "$tree" id "$TEST_USER" >/dev/null 2>&1 && return 0
	uid=$(id -u "$TEST_USER" 2>/dev/null) || uid=
	chroot "$tree" useradd -m ${uid:+-u "$uid"} "$TEST_USER"
}

# Run CMD in SUITE's tree with testcluster.sh's settings for that suite.
in_tree() {
	local suite=$1 tree=$2
	shift 2
	local offset
	offset=$(suite_info "$suite" | cut -d' ' -f1)
	chroot "$tree" /usr/bin/env \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		XLOOP_TESTCLUSTER_DIR="/var/lib/xloop-cluster-$suite" \
		XLOOP_TESTCLUSTER_PORT_OFFSET="$offset" \
		XLOOP_TESTCLUSTER_CGROUPS=no \
		SLURM_CONF="/var/lib/xloop-cluster-$suite/etc/slurm.conf" \
		"$@"
}

cmd_up() {
	local suite=$1 tree
	shift
	if [ "${1:-}" = --accounting ] && [[ $(suite_info "$suite") != *' acct' ]]; then
		die "$suite has no accounting packages (accounting runs on: trixie, sid)"
	fi
	cmd_build "$suite"
	tree=$(tree_of "$suite")
	mount_all "$tree"
	add_user "$tree"
	in_tree "$suite" "$tree" "$ROOT/ops/slurm/testcluster.sh" up "$@" >&2
	in_tree "$suite" "$tree" "$ROOT/ops/slurm/testcluster.sh" adduser "$TEST_USER" >/dev/null
}

cmd_down() {
	local suite=$1 tree
	tree=$(tree_of "$suite")
	[ -d "$tree" ] || return 0
	if [ -x "$tree$ROOT/ops/slurm/testcluster.sh" ]; then
		in_tree "$suite" "$tree" "$ROOT/ops/slurm/testcluster.sh" down >&2 || true
	fi
	umount_all "$tree"
}

main() {
	local suite=${1:-} cmd=${2:-} tree
	[ "$suite" = list ] && {
		for suite in bullseye trixie sid; do
			set -- $(suite_info "$suite")
			printf '%s: slurmctld %d, slurmd %d, slurmdbd %d, MariaDB %d (%s)\n' "$suite" \
				$((16817 + $1)) $((16818 + $1)) $((16819 + $1)) $((13306 + $1)) "$2"
		done
		return 0
	}
	suite_info "$suite" >/dev/null || usage
	[ $# -ge 2 ] || usage
	shift 2
	[ "$(id -u)" -eq 0 ] || die "run as root (it mounts and chroots)"
	tree=$(tree_of "$suite")
	case $cmd in
	build) cmd_build "$suite" ;;
	up) cmd_up "$suite" "$@" ;;
	down) cmd_down "$suite" ;;
	status | env)
		[ -d "$tree" ] || die "no $suite tree (run: $PROG $suite build)"
		in_tree "$suite" "$tree" "$ROOT/ops/slurm/testcluster.sh" "$cmd"
		;;
	exec)
		[ $# -gt 0 ] || usage
		mountpoint -q "$tree$ROOT" || die "$suite is not up (run: $PROG $suite up)"
		in_tree "$suite" "$tree" sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' \
			sh "$PWD" "$@"
		;;
	version) sed -n 's/^slurm=//p' "$tree/etc/xloop-chroot" ;;
	*) usage ;;
	esac
}

main "$@"
