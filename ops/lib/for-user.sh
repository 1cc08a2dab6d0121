# shellcheck shell=bash
# For the entry points that run as root and run xloop as an unprivileged
# user (ops/demo/demo.sh, bench/): a checkout in a directory that user
# cannot enter (a clone under `mktemp -d`, or in /root: mode 0700) must
# work as well, without opening the caller's directories to others. What
# the user runs is copied where it can reach it. Source it.
#   copy_for_user DEST FILE...    FILE... copied into DEST (made, mode 0755,
#                                 under /tmp), their modes kept
#   check_user_runs USER XLOOP    USER runs XLOOP --version, or a clear error
#                                 (what blocks it) and exit 1

copy_for_user() {
	local dest=$1
	shift
	mkdir -p "$dest" && chmod 755 "$dest" || return 1
	cp -p "$@" "$dest/" && chmod a+rX "$dest"/* || return 1
}

check_user_runs() {
	local user=$1 x=$2 out
	if out=$(runuser -u "$user" -- "$x" --version 2>&1); then
		printf '%s\n' "$out"
		return 0
	fi
	printf '%s: %s cannot run %s: %s\n' "${0##*/}" "$user" "$x" "$out" >&2
	exit 1
}
