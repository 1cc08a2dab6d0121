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

finish
