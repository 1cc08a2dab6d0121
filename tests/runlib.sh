# Sourced by tests/run.sh, tests/one.sh and tests/matrix.sh: the counting of
# an integration test's result (its last line is "RESULT pass=N fail=M skip=K").
# shellcheck shell=bash

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
