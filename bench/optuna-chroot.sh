#!/usr/bin/env bash
# The search benchmark's trixie tree for Optuna 4.1 (python3-optuna 4.1.0
# with python3-torch and python3-scipy: TPE multivariate and GPSampler),
# made with mmdebstrap from the host's own Debian mirror when missing and
# cached beside ops/slurm/chroot-cluster.sh's trees in
# ${XLOOP_CHROOT_CACHE:-/var/cache/xloop/chroots}/bench-optuna-trixie-HASH
# (HASH: of the package list, so a changed list builds a new tree). The
# mirror's testing Release files are past Valid-Until, hence the aptopt.
# Prints the tree's path. Runs as root.
#   bench/optuna-chroot.sh
set -euo pipefail
umask 022
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${XLOOP_CHROOT_CACHE:-/var/cache/xloop/chroots}
SUITE=trixie
PKGS="python3 python3-optuna python3-torch python3-scipy"
FORMAT=1

die() { printf 'optuna-chroot.sh: error: %s\n' "$*" >&2; exit 1; }

hash=$(printf '%s\n' "$SUITE" "$FORMAT" "$PKGS" | sha256sum | cut -c1-12)
tree=$CACHE/bench-optuna-$SUITE-$hash
if [ -f "$tree/etc/xloop-bench-optuna" ]; then
	echo "$tree"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "the tree $tree is missing; building it needs root"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (apt-get install mmdebstrap)"
mkdir -p "$CACHE"
exec 7>>"$CACHE/.lock-bench-optuna"
flock 7
if [ ! -f "$tree/etc/xloop-bench-optuna" ]; then
	# the mirror chroot-cluster.sh uses: the host's own apt sources
	mirror=$(bash -c '. <(sed -n "/^host_mirror()/,/^}/p" "$1"); host_mirror' _ \
		"$ROOT/ops/slurm/chroot-cluster.sh")
	tmp=$tree.tmp.$$
	t0=$SECONDS
	printf 'optuna-chroot.sh: building %s (mmdebstrap, %s)\n' "$tree" "$mirror" >&2
	if ! nice -n 10 mmdebstrap --quiet --variant=apt --components=main \
		--include="$(echo $PKGS | tr ' ' ,)" \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$SUITE" "$tmp" "$mirror" >&2; then
		rm -rf "$tmp"
		die "mmdebstrap failed for $SUITE"
	fi
	ver=$(chroot "$tmp" /usr/bin/python3 -c 'import optuna; print(optuna.__version__)') ||
		{ rm -rf "$tmp"; die "optuna does not import in the new tree"; }
	printf 'suite=%s\noptuna=%s\n' "$SUITE" "$ver" >"$tmp/etc/xloop-bench-optuna"
	mv "$tmp" "$tree"
	for old in "$CACHE/bench-optuna-$SUITE"-*; do	# older package lists
		case $old in *.tmp.*) continue ;; esac
		[ -d "$old" ] && [ "$old" != "$tree" ] && rm -rf "$old"
	done
	printf 'optuna-chroot.sh: built in %d s (optuna %s)\n' $((SECONDS - t0)) "$ver" >&2
fi
exec 7>&-
echo "$tree"
