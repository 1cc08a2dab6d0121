#!/usr/bin/env bash
# Run every libFuzzer target in build/fuzz/ for SECONDS each (default 60),
# then the job.sh property harness on the jobsh corpus. Called by
# `./build.sh fuzz [SECONDS]` after it built the targets; by hand:
#   fuzz/run.sh [SECONDS] [TARGET...]      (TARGET: scontrol, jobsh, ...)
# Seeds are made afresh in build/fuzz/seeds/ from tests/fixtures/,
# ops/slurm/captures/, ../shared/slurm-samples/ (read in place when
# present, never copied into the repository), fuzz/seeds/ and the
# reproducers in fuzz/findings/<target>-*.bin. The working
# corpus stays in build/fuzz/corpus/<target>, crash inputs go to
# build/fuzz/artifacts/. Prints one line per target; exits 1 when a target
# found a crash, leak or timeout, or the property harness failed.
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=build/fuzz
SECS=${1:-60}
shift || true
SAMPLES=${XLOOP_SAMPLES:-$ROOT/../shared/slurm-samples}
SLURM_TARGETS="scontrol squeue sacct sbatch sinfo records fields sacctmgr"

case "$SECS" in
'' | *[!0-9]*) echo "fuzz/run.sh: SECONDS must be a number, not '$SECS'" >&2; exit 2 ;;
esac

# Copy a file as a seed: whole, and each run of lines between '#' lines.
add_slurm_seed() {
	local f=$1 dir=$2 base
	base=$(basename "$f")
	cp "$f" "$dir/$base"
	awk -v out="$dir/$base" '
		/^#/ { if (n) { close(f); n = 0 } next }
		{ if (!n) { k++; f = out ".part" k; n = 1 } print > f }
	' "$f"
}

# Fill build/fuzz/seeds/<target>/ for every target; the Slurm targets
# share build/fuzz/seeds/slurm/ (read only: each has its own corpus).
make_seeds() {
	local t f
	rm -rf "$OUT/seeds"
	for t in slurm $SLURM_TARGETS jobsh cv config setting directives; do
		mkdir -p "$OUT/seeds/$t"
	done
	for f in tests/fixtures/slurm/* ops/slurm/captures/*; do
		[ -f "$f" ] && add_slurm_seed "$f" "$OUT/seeds/slurm"
	done
	if [ -d "$SAMPLES" ]; then
		for f in "$SAMPLES"/*.txt; do
			[ -f "$f" ] && add_slurm_seed "$f" "$OUT/seeds/slurm"
		done
	else
		echo "fuzz: no Slurm samples in $SAMPLES: skipping them"
	fi
	# real bash scripts for the job.sh scanner
	for f in build.sh fuzz/run.sh tests/t/*.sh $(find ops -name '*.sh' -type f); do
		[ -f "$f" ] && cp "$f" "$OUT/seeds/jobsh/$(echo "$f" | tr / _)" &&
			cp "$f" "$OUT/seeds/directives/$(echo "$f" | tr / _)"
	done
	# past findings, so that a fixed bug stays fixed
	for f in fuzz/findings/*.bin; do
		[ -f "$f" ] || continue
		t=${f##*/}
		t=${t%%-*}
		[ -d "$OUT/seeds/$t" ] && cp "$f" "$OUT/seeds/$t/"
	done
	for f in schemas/*.json; do
		[ -f "$f" ] || continue
		cp "$f" "$OUT/seeds/cv/"
		cp "$f" "$OUT/seeds/config/"
	done
}

# The dictionary of a target, if any.
dict_of() {
	case "$1" in
	jobsh | directives) echo fuzz/dicts/jobsh.dict ;;
	cv | config) echo fuzz/dicts/json.dict ;;
	setting) echo ;;
	*) echo fuzz/dicts/slurm.dict ;;
	esac
}

# Fuzz one target; prints its line, returns 1 on a finding.
run_target() {
	local t=$1 bin=$OUT/fuzz_$1 log=$OUT/logs/$1.log dict start secs rc execs found
	local seeds=("$OUT/seeds/$t")
	[[ " $SLURM_TARGETS " == *" $t "* ]] && seeds+=("$OUT/seeds/slurm")
	[ -d "fuzz/seeds/$t" ] && seeds+=("fuzz/seeds/$t")
	dict=$(dict_of "$t")
	mkdir -p "$OUT/corpus/$t" "$OUT/seeds/$t"
	start=$(date +%s)
	# -timeout is wall time: the suite's brief run, niced beside busy
	# lanes, gives each input XLOOP_FUZZ_TIMEOUT (tests/run.sh: 120 s; a
	# starved jobsh input once took over 6 s that needs 0.1 s of CPU)
	nice -n 19 "$bin" -max_total_time="$SECS" -timeout="${XLOOP_FUZZ_TIMEOUT:-5}" -rss_limit_mb=2048 \
		-print_final_stats=1 -detect_leaks=1 \
		-artifact_prefix="$OUT/artifacts/$t-" ${dict:+-dict="$dict"} \
		"$OUT/corpus/$t" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n1)
	found=$(grep -m1 -oE 'ERROR: (libFuzzer|[A-Za-z]+Sanitizer): .*|runtime error: .*|fuzz check failed.*' \
		"$log" | cut -c1-160)
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		printf '%-9s %10s execs in %3ss, %5s corpus files, no crash\n' "$t" \
			"${execs:-?}" "$secs" "$(ls "$OUT/corpus/$t" | wc -l)"
		return 0
	fi
	printf '%-9s %10s execs in %3ss, FOUND (exit %s): %s\n' "$t" "${execs:-?}" \
		"$secs" "$rc" "${found:-see $log}"
	grep -E 'Test unit written to|artifact_prefix' "$log" | sed 's/^/          /'
	return 1
}

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for b in "$OUT"/fuzz_*; do
		[ -x "$b" ] && targets+=("${b##*/fuzz_}")
	done
fi
[ ${#targets[@]} -gt 0 ] || { echo "fuzz/run.sh: no targets in $OUT (run ./build.sh fuzz)" >&2; exit 2; }
mkdir -p "$OUT/artifacts" "$OUT/logs"
make_seeds
failed=0
echo "fuzz: ${#targets[@]} targets, ${SECS}s each (logs in $OUT/logs/)"
for t in "${targets[@]}"; do
	run_target "$t" || failed=1
done

# the rewriter against bash, on everything the jobsh fuzzer kept
if [[ " ${targets[*]} " == *" jobsh "* ]]; then
	if ! nice -n 19 "$OUT/jobsh_property" "$OUT/corpus/jobsh" "$OUT/seeds/jobsh" \
		fuzz/seeds/jobsh; then
		echo "jobsh_property: FAILED"
		failed=1
	fi
fi
exit "$failed"
