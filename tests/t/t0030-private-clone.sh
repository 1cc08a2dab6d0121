#!/usr/bin/env bash
# The first command from a private clone (issue 27): a checkout in a
# directory the demo's user cannot enter (`git clone ... "$(mktemp -d)/xloop"`,
# /root: mode 0700). The demo's user-switching step (ops/demo/demo.sh
# --user-check: it copies ./xloop where the user can reach it and runs it
# as that user) works from there, and leaves the directory's mode alone.
# Builds nothing, starts no cluster: the checkout is this binary and the
# demo's scripts, copied into a 0700 directory.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "the demo from a 0700 clone" "needs root (the demo switches users)"
	finish
	exit
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$(mktemp -d /tmp/xloop-private-XXXXXX)	# 0700, as mktemp makes it
trap 'rm -rf "$P" "$T_TMP"' EXIT
C=$P/xloop
step "a private checkout" mkdir -p "$C/ops/demo" "$C/ops/lib"
step "its xloop" cp "$XLOOP_BIN" "$C/xloop"
step "its demo" cp "$ROOT/ops/demo/demo.sh" "$C/ops/demo/"
step "its helpers" cp -r "$ROOT/ops/lib/." "$C/ops/lib/"
check "the clone's parent is 0700" test "$(stat -c %a "$P")" = 700
check "the test user cannot run the clone's xloop itself" \
	sh -c '! runuser -u "$1" -- "$2" --version >/dev/null 2>&1' _ "$XLOOP_TEST_USER" "$C/xloop"
before=$(ls -d /tmp/xloop-demo-bin-* 2>/dev/null)
out=$(XLOOP_DEMO_USER=$XLOOP_TEST_USER "$C/ops/demo/demo.sh" --user-check 2>&1)
rc=$?
check "the demo's user step works from the 0700 clone (exit $rc)" test "$rc" -eq 0
check "and ran xloop as the user" sh -c 'printf "%s" "$1" | grep -q "runs xloop 0\."' _ "$out"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/    /'
check "the clone's parent is still 0700 (nothing opened)" test "$(stat -c %a "$P")" = 700
check "no copy of xloop is left behind" test "$(ls -d /tmp/xloop-demo-bin-* 2>/dev/null)" = "$before"
finish
