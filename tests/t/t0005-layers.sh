#!/usr/bin/env bash
# The architecture's one-way rules (ops/check/layers.py): no include or call
# circle among src/ modules, the command layer and private headers kept to
# themselves, pure modules depending on pure ones only, and no room over 900
# lines without a reason. The call graph is read from the ASan build's
# objects. Needs no Slurm.
. "$(dirname "$0")/lib.sh"

R=${XLOOP_ROOT_DIR:?}
check "src/ keeps its one-way rules (includes, calls, rooms)" \
	python3 "$R/ops/check/layers.py" "$R/src" "$R/build/asan/obj"

# the checker itself must be able to fail: a circle and a long file in a copy
step "copy src" cp -r "$R/src" "$T_TMP/src"
printf '#include "stages/reconcile.h"\n' >>"$T_TMP/src/stages/judge.c"
check "a new include circle is found" \
	sh -c "python3 '$R/ops/check/layers.py' '$T_TMP/src' | grep -q 'include circle:.*judge.*reconcile\|pure judge includes reconcile'"
printf '#include "runs.h"\n' >>"$T_TMP/src/lib/buf.c"
check "a small library that includes the loop is found" \
	sh -c "python3 '$R/ops/check/layers.py' '$T_TMP/src' | grep -q 'lib/buf is a small library and includes runs'"
seq 1000 | sed 's/^/\/\/ /' >"$T_TMP/src/long.c"
check "a long file without a reason is found" \
	sh -c "python3 '$R/ops/check/layers.py' '$T_TMP/src' | grep -q 'long.c has 1000 lines'"

finish
