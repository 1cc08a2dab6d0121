#!/usr/bin/env bash
# What the tests import and call comes from what build.sh installs
# (ops/check/packages.py): on a fresh machine nothing else is there (issue
# 32: t0031 once needed python3-optuna, which only `./build.sh bench`
# installed). Needs no Slurm.
. "$(dirname "$0")/lib.sh"

R=${XLOOP_ROOT_DIR:?}
PY=/usr/bin/python3
if ! command -v dpkg-query >/dev/null; then
	skip "the tests' packages" "no dpkg on this machine"
	finish
	exit
fi
check "every module and program the tests use is installed by build.sh" \
	$PY "$R/ops/check/packages.py" "$R"

# the checker must be able to fail: a copy whose build.sh forgets a package
# a test uses (the sqlite3 program, t1860) and whose test imports a module
# no package has
step "copy the tree" mkdir -p "$T_TMP/r/tests/t" "$T_TMP/r/ops/check"
step "copy build.sh" sh -c "sed 's/ sqlite3 / /' '$R/build.sh' >'$T_TMP/r/build.sh'"
step "copy tests" sh -c "cp '$R'/tests/t/*.sh '$R'/tests/t/*.py '$T_TMP/r/tests/t/'"
check "a program whose package build.sh forgets is found" \
	sh -c "! $PY '$R/ops/check/packages.py' '$T_TMP/r' >'$T_TMP/out1' && grep -q '^program sqlite3 .*package sqlite3 is not installed by build.sh' '$T_TMP/out1'"
printf 'import json\nimport xloop_no_such_module\n' >"$T_TMP/r/tests/t/extra.py"
step "the sqlite3 package back" cp "$R/build.sh" "$T_TMP/r/build.sh"
check "a module no package has is found" \
	sh -c "! $PY '$R/ops/check/packages.py' '$T_TMP/r' >'$T_TMP/out2' && grep -q '^python module xloop_no_such_module (tests/t/extra.py:2): not on this machine' '$T_TMP/out2'"

# no package host is written in the tree (issue 47): static-deps.sh takes its
# mirror from the host's apt sources. The hosts are patterns here, so this
# file names none either.
hosts='([a-z0-9-]+[.])*(debian[.](org|net)|ubuntu[.]com)|pypi[.]org|pythonhosted[.]org'
hosts="$hosts|npmjs[.](org|com)|yarnpkg[.]com|proxy[.]golang[.]org|crates[.]io|rubygems[.]org"
hosts="$hosts|anaconda[.](org|com)|nodesource[.]com|jsdelivr[.]net|unpkg[.]com|packages[.]cloud[.]google"
# git grep: the files git tracks and would commit, not build/ or caches
# (exit 1: none; 0: the lines that name one; 128: git could not read it)
no_hosts() {
	local rc
	git -C "$1" grep -nIE "$hosts"
	rc=$?
	[ "$rc" -eq 1 ] || return $((rc == 0 ? 1 : rc))
}
if git -C "$R" rev-parse --git-dir >/dev/null 2>&1; then
	check "no package host is named in the tree" no_hosts "$R"
else
	skip "no package host is named in the tree" "not a git tree"
fi
step "a tree that names one" sh -c "git init -q '$T_TMP/h' && printf 'U=http://deb.%s.org/x\n' debian >'$T_TMP/h/a.sh' && git -C '$T_TMP/h' add a.sh"
expect_rc 1 "a package host in a file is found" no_hosts "$T_TMP/h"

# static-deps.sh's mirror: the host's apt sources, one-line and deb822
SD=$R/ops/build/static-deps.sh
mirror_is() {	# apt-DIR SUITE URI
	local got
	got=$(XLOOP_APT_ETC=$T_TMP/apt-$1 "$SD" --mirror "$2") && [ "$got" = "$3" ] ||
		{ echo "apt-$1 $2: got '$got', want $3"; return 1; }
}
mkdir -p "$T_TMP"/apt-{line,822,none}/sources.list.d
cat >"$T_TMP/apt-line/sources.list" <<'EOF'
# deb http://commented.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/k.gpg] http://one.invalid/debian/ bookworm main
deb [ arch=amd64 ] http://sec.invalid/debian-security bookworm-security main
deb-src http://src.invalid/debian trixie main
EOF
cat >"$T_TMP/apt-822/sources.list.d/other.list" <<'EOF'
deb https://vendor.invalid/apt stable main
EOF
cat >"$T_TMP/apt-822/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://off.invalid/debian
Suites: bookworm
Enabled: no
Components: main

# the mirror
Types: deb deb-src
URIs: http://two.invalid/debian
Suites: bookworm
 bookworm-updates
Components: main

Types: deb
URIs: http://two.invalid/debian-security/
Suites: bookworm-security
EOF
printf 'Types: deb\nURIs: https://vendor.invalid/node\nSuites: nodistro\n' >"$T_TMP/apt-none/sources.list.d/node.sources"
check "one-line sources: bookworm's mirror (options and a comment skipped)" \
	mirror_is line bookworm http://one.invalid/debian
check "one-line sources: bookworm-security's mirror" \
	mirror_is line bookworm-security http://sec.invalid/debian-security
check "one-line sources: a deb-src line's" mirror_is line trixie http://src.invalid/debian
check "deb822 sources: a disabled stanza skipped" mirror_is 822 bookworm http://two.invalid/debian
check "deb822 sources: a suite on a continuation line" \
	mirror_is 822 bookworm-updates http://two.invalid/debian
check "deb822 sources: bookworm-security's mirror" \
	mirror_is 822 bookworm-security http://two.invalid/debian-security
expect_rc 1 "sources that name no bookworm mirror: none, no host made up" \
	env XLOOP_APT_ETC="$T_TMP/apt-none" "$SD" --mirror bookworm
check "with no mirror, static-deps.sh stops and says where to add one" \
	sh -c "! XLOOP_APT_ETC='$T_TMP/apt-none' '$SD' '$T_TMP/cache' 2>'$T_TMP/sd.err' && grep -q 'name no mirror for bookworm' '$T_TMP/sd.err'"

finish
