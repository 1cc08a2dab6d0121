#!/usr/bin/env bash
# capture-version.sh - the outputs xloop parses, as one Slurm version prints
# them, for the parser tests of the version matrix:
#
#   ops/slurm/chroot-cluster.sh SUITE up [--accounting]
#   ops/slurm/chroot-cluster.sh SUITE exec ops/slurm/capture-version.sh
#
# writes ops/slurm/captures/MAJOR.MINOR/ (OUTDIR as $1 to change): sbatch
# --parsable and --test-only, squeue and scontrol show job (-o, -d, -d -o)
# of running and pending jobs, scontrol show job -o and sacct -P (xloop's
# fields) of finished ones (exit 0, exit 3, exit 137, killed by SIGKILL,
# an array with a failed task), sinfo -R, scontrol ping, show config,
# show node and show partition, and sacctmgr. Without accounting, the config and sacct's answer go to
# *_plain.txt; with it, to *_accounting.txt beside the sacct captures.
# Each file starts with '# command: ...'; a second '# exit: N' line where
# the exit status and stderr are part of what is captured.
set -euo pipefail

readonly PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
VERSION=$(sinfo -V | sed 's/.* //')
readonly VERSION
readonly OUT=${1:-$HERE/captures/$(cut -d. -f1-2 <<<"$VERSION")}
readonly RUN_AS=${XLOOP_CAPTURE_USER:-xloopt}
# xloop's own formats (src/slurm/parse.h)
readonly SQUEUE_FMT='%i|%j|%T|%r|%S|%e|%k|%P|%M|%l|%A'
readonly SACCT_FIELDS=JobID,JobIDRaw,JobName,State,ExitCode,Start,End,Elapsed,MaxRSS,ReqMem,Comment,NodeList,Partition,Submit

# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"

# capture_all NAME CMD... : like capture, with stderr and the exit status.
capture_all() {
	local name=$1 rc=0 out
	shift
	out=$(as_user "$@" 2>&1) || rc=$?
	printf '# command: %s\n# exit: %s\n%s\n' "$(quote_cmd "$@")" "$rc" "$out" >"$OUT/$name.txt"
	msg "wrote $OUT/$name.txt (exit $rc)"
}

accounting=no
conf=$(scontrol show config)
grep -Eq '^AccountingStorageType += accounting_storage/slurmdbd' <<<"$conf" && accounting=yes
msg "Slurm $VERSION, accounting: $accounting, into $OUT"

# --- running and pending: a GPU holder, one waiting for it, a dependency ---
ok_cmd=(sbatch --parsable -J xloop-ok --gres=gpu:1 --comment 'xloop run=ok seed=1'
	--wrap 'sleep 6; echo done')
{
	printf '# command: %s\n' "$(quote_cmd "${ok_cmd[@]}")"
	as_user "${ok_cmd[@]}"
} >"$OUT/sbatch_parsable.txt"
ok=$(tail -n 1 "$OUT/sbatch_parsable.txt")
gpu=$(submit -J xloop-gpu-b --gres=gpu:1 --comment 'xloop run=gpu-b note=waits for gpu' --wrap 'true')
dep=$(submit -J xloop-after-ok -p short --dependency="afterany:$ok" --wrap 'true')
wait_for 30 "job $ok running" state_is "$ok" RUNNING
wait_for 30 "job $gpu pending on Resources" reason_is "$gpu" Resources
wait_for 30 "job $dep pending on Dependency" reason_is "$dep" Dependency
capture squeue_h_r_o squeue -h -r -o "$SQUEUE_FMT" -u "$RUN_AS"
capture scontrol_show_job_o_running scontrol show job -o "$ok"
capture scontrol_show_job_d_running scontrol show job -d "$ok"
capture scontrol_show_job_d_o_running scontrol show job -d -o "$ok"
capture scontrol_show_job_o_pending_resources scontrol show job -o "$gpu"
capture scontrol_show_job_o_pending_dependency scontrol show job -o "$dep"
capture_all sbatch_test_only sbatch --test-only --gres=gpu:1 --wrap true

# --- finished: exit 0, 3, 137, SIGKILL, and an array with a failed task ----
fail=$(submit -J xloop-fail --wrap 'echo failing; exit 3')
e137=$(submit -J xloop-137 --wrap 'exit 137')
# shellcheck disable=SC2016 # expanded by the job's shell
sig=$(submit -J xloop-sig --wrap 'kill -KILL $$')
# shellcheck disable=SC2016
arr=$(submit -J xloop-array --array=0-2 --wrap 'exit $((SLURM_ARRAY_TASK_ID == 2 ? 4 : 0))')
wait_for 90 "the jobs to finish" all_finished "$ok" "$gpu" "$dep" "$fail" "$e137" "$sig"
wait_for 60 "array $arr to finish" queue_empty "$arr"
capture scontrol_show_job_o_completed scontrol show job -o "$ok"
capture scontrol_show_job_o_failed_exit3 scontrol show job -o "$fail"
capture scontrol_show_job_o_exit137 scontrol show job -o "$e137"
capture scontrol_show_job_o_sigkill scontrol show job -o "$sig"
capture scontrol_show_job_o_array scontrol show job -o "$arr"
if [ "$accounting" = yes ]; then
	wait_for 30 "job $ok in sacct" in_sacct "$ok" xloop-ok
	wait_for 30 "job $fail in sacct" in_sacct "$fail" xloop-fail
	wait_for 30 "job $e137 in sacct" in_sacct "$e137" xloop-137
	wait_for 30 "job $sig in sacct" in_sacct "$sig" xloop-sig
	wait_for 30 "array $arr in sacct" in_sacct "$arr" xloop-array
	capture sacct_P_n_completed sacct -n -P -o "$SACCT_FIELDS" -j "$ok"
	capture sacct_P_n_failed_exit3 sacct -n -P -o "$SACCT_FIELDS" -j "$fail"
	capture sacct_P_n_exit137 sacct -n -P -o "$SACCT_FIELDS" -j "$e137"
	capture sacct_P_n_sigkill sacct -n -P -o "$SACCT_FIELDS" -j "$sig"
	capture sacct_P_n_array sacct -n -P -o "$SACCT_FIELDS" -j "$arr"
	capture sacctmgr_list_assoc sacctmgr -n -P list assoc format=cluster,account,user
	capture scontrol_show_config_accounting scontrol show config
else
	capture_all sacct_P_n_plain sacct -n -P -o "$SACCT_FIELDS" -j "$ok"
	capture scontrol_show_config_plain scontrol show config
fi
capture scontrol_ping scontrol ping
capture scontrol_show_node_o scontrol show node -o "$NODE"
capture scontrol_show_partition_o scontrol show partition -o gpu

# --- a drained node ----------------------------------------------------------
capture_drained

rm -rf "$WORK"
msg "done: $OUT"
