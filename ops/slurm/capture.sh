#!/usr/bin/env bash
# capture.sh - exercise a running test cluster (testcluster.sh up --accounting)
# and save raw client outputs as test fixtures.
#
#   ops/slurm/capture.sh [OUTDIR]      (default: ops/slurm/captures)
#
# Runs as root; jobs are submitted as an unprivileged user
# (XLOOP_CAPTURE_USER, default xloopt, created with useradd -m if missing).
# Besides writing the fixtures it checks the behaviour they document
# (exit codes, GPU serialisation, OOM, array pending) and measures how long a
# --dependency=afterany job takes to start after its predecessor ends.
# Each fixture file starts with one '# command: ...' line, then the raw output.
set -euo pipefail

readonly PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly OUT=${1:-$HERE/captures}
readonly RUN_AS=${XLOOP_CAPTURE_USER:-xloopt}
readonly SACCT_FIELDS=JobID,JobName,State,ExitCode,Start,End,Elapsed,MaxRSS,ReqMem,Comment
readonly SQUEUE_FMT='%i|%j|%T|%r|%S|%e|%k|%P|%M|%l'

# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"

# --- 1. exit 0 and exit 3 ---------------------------------------------------
ok_cmd=(sbatch --parsable -J xloop-ok --comment 'xloop run=ok seed=1'
    --wrap 'python3 -c "x = bytearray(64 * 1024 * 1024); import time; time.sleep(3)"; echo done')
{
    printf '# command: %s\n' "$(quote_cmd "${ok_cmd[@]}")"
    as_user "${ok_cmd[@]}"
} >"$OUT/sbatch_parsable.txt"
msg "wrote $OUT/sbatch_parsable.txt"
ok=$(tail -n 1 "$OUT/sbatch_parsable.txt")
fail=$(submit -J xloop-fail --wrap 'echo failing; exit 3')
wait_for 60 "jobs $ok/$fail to finish" all_finished "$ok" "$fail"
expect "$ok" JobState COMPLETED
expect "$ok" ExitCode 0:0
expect "$fail" JobState FAILED
expect "$fail" ExitCode 3:0
capture scontrol_show_job_o_completed scontrol show job -o "$ok"
capture scontrol_show_job_o_failed_exit3 scontrol show job -o "$fail"
wait_for 30 "job $ok in sacct" in_sacct "$ok" xloop-ok
wait_for 30 "job $fail in sacct" in_sacct "$fail" xloop-fail
capture sacct_P_n_completed_steps sacct -P -n -j "$ok" -o "$SACCT_FIELDS"
capture sacct_P_n_failed sacct -P -n -j "$fail" -o "$SACCT_FIELDS"

# --- 2. two GPU jobs serialise; squeue with comments ------------------------
g1=$(submit -J xloop-gpu-a --gres=gpu:1 --comment 'xloop run=gpu-a' --wrap 'sleep 60')
g2=$(submit -J xloop-gpu-b --gres=gpu:1 --comment 'xloop run=gpu-b note=waits for gpu' \
    --wrap 'sleep 60')
dep=$(submit -J xloop-after-a -p short --dependency="afterany:$g1" --comment 'after gpu a' \
    --wrap 'true')
wait_for 30 "job $g1 running" state_is "$g1" RUNNING
wait_for 30 "job $g2 pending on Resources" reason_is "$g2" Resources
wait_for 30 "job $dep pending on Dependency" reason_is "$dep" Dependency
expect "$g2" JobState PENDING
capture scontrol_show_job_o_pending_resources scontrol show job -o "$g2"
capture scontrol_show_job_o_pending_dependency scontrol show job -o "$dep"
capture squeue_h_o squeue -h -o "$SQUEUE_FMT"
as_user scancel "$g1" "$g2" "$dep"
wait_for 60 "gpu jobs to end" all_finished "$g1" "$g2" "$dep"
# Let the node drain its completing jobs before the array needs both CPUs.
wait_for 60 "node $NODE idle" node_idle

# --- 3. array of 3 on 2 CPUs: one task pending ------------------------------
# shellcheck disable=SC2016 # expanded by the job's shell, not here
arr=$(submit -J xloop-array --array=0-2 --wrap 'sleep 20; exit $((SLURM_ARRAY_TASK_ID == 2 ? 4 : 0))')
wait_for 30 "array $arr: 2 running, 1 pending" array_split "$arr" 2 1
# The pending task shows Reason=None until the main scheduler has looked at it.
wait_for 15 "pending array task to show Reason=Resources" pending_reason_is "$arr" Resources
capture scontrol_show_job_o_array scontrol show job -o "$arr"
capture squeue_h_o_array squeue -h -j "$arr" -o "$SQUEUE_FMT"
wait_for 120 "array $arr to finish" queue_empty "$arr"
wait_for 30 "array $arr in sacct" in_sacct "$arr" xloop-array
capture sacct_P_n_array sacct -P -n -j "$arr" -o "$SACCT_FIELDS"

# --- 4. OOM -------------------------------------------------------------------
oom=$(submit -J xloop-oom --mem=50M --wrap 'python3 -c "x = bytearray(300 * 1024 * 1024)"')
wait_for 60 "job $oom to finish" finished "$oom"
expect "$oom" JobState OUT_OF_MEMORY
expect "$oom" ExitCode 0:125
capture scontrol_show_job_o_oom scontrol show job -o "$oom"
wait_for 30 "job $oom in sacct" in_sacct "$oom" xloop-oom
capture sacct_P_n_oom sacct -P -n -j "$oom" -o "$SACCT_FIELDS"

# --- 5. dependency start latency -------------------------------------------
for _ in 1 2 3; do
    a=$(submit -J xloop-dep-a -o "$WORK/dep-%j.out" --wrap 'sleep 2; date +%s.%N')
    b=$(submit -J xloop-dep-b -o "$WORK/dep-%j.out" --dependency="afterany:$a" \
        --wrap 'date +%s.%N')
    wait_for 60 "job $b to finish" finished "$b"
    wait_for 10 "output of $b" test -s "$WORK/dep-$b.out"
    awk 'NR == FNR { a = $1; next } { printf "dependency latency: %.2fs (predecessor end -> dependent start)\n", $1 - a }' \
        "$WORK/dep-$a.out" "$WORK/dep-$b.out"
done

# --- 6. drained node reason -------------------------------------------------
capture_drained

rm -rf "$WORK"
msg "all checks passed; fixtures in $OUT"
