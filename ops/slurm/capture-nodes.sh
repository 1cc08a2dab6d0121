#!/usr/bin/env bash
# capture-nodes.sh - on a running multi-node test cluster
# (testcluster.sh up --accounting --nodes 3 --gpus 2), what Slurm says of a
# node lost under a job, a job it requeued itself, a preemption (REQUEUE and
# CANCEL) and a job across two nodes, saved as fixtures (issue 34):
#
#   ops/slurm/capture-nodes.sh [OUTDIR]   (default: ops/slurm/captures/nodes)
#   ops/slurm/capture-nodes.sh --gpus [OUTDIR]   only the GPU indexes (5.)
#
# 5. (also alone, with --gpus) a job across node2 and node3 whose GPUs have
# other indexes on each node (node2's GPU 0 held by another job: IDX 1
# there, 0 on node3) and one with the same index on both, from `scontrol -d
# show job` (-o and multi-line); node2 and node3 need 2 GPUs (--gpus 2, or
# --gpus 1,2,2).
#
# Not a version directory (captures/MAJOR.MINOR/ holds every capture of a
# version): the outputs of Debian 12's Slurm 22.05 on the multi-node profile.
# Each file starts with one '# command: ...' line, then the raw output.
# sacct captures only with accounting. Kills and restarts nodes: run it on
# a cluster nothing else uses.
set -euo pipefail

readonly PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
only_gpus=
[[ ${1:-} != --gpus ]] || { only_gpus=1; shift; }
readonly OUT=${1:-$HERE/captures/nodes}
readonly RUN_AS=${XLOOP_CAPTURE_USER:-xloopt}
readonly SACCT_FIELDS=JobID,JobIDRaw,JobName,State,ExitCode,Start,End,Elapsed,MaxRSS,ReqMem,Comment,NodeList,Partition,Submit
readonly SQUEUE_FMT='%i|%j|%T|%r|%S|%e|%k|%P|%M|%l|%A'

# shellcheck source=capture-lib.sh
. "$HERE/capture-lib.sh"
acct=
sacct -n -j 1 >/dev/null 2>&1 && acct=1
tc() { "$HERE/testcluster.sh" "$@"; }
running_on() { [[ $(job_field "$1" JobState) == RUNNING ]] && job_field "$1" NodeList; }
node_is() { [[ $(sinfo -h -N -n "$1" -o %T | head -n 1) == "$2" ]]; }
all_running() {
    local j
    for j in "$@"; do [[ $(job_field "$j" JobState) == RUNNING ]] || return 1; done
}
requeued() { [[ $(job_field "$1" Restarts) -ge 1 ]]; }
restarted() { [[ $(job_field "$1" Restarts) -ge 1 && $(job_field "$1" JobState) == RUNNING ]]; }
# --- 5. across two nodes: another GPU index on each -----------------------
capture_gpu_indexes() {
    local hold same diff
    hold=$(submit -J xloop-hold -w node2 --gres=gpu:1 --wrap 'sleep 300')
    wait_for 30 "job $hold running" all_running "$hold"
    diff=$(submit -J xloop-two-gpus -N2 -w node2,node3 --gres=gpu:1 --wrap 'srun sleep 300')
    wait_for 30 "job $diff running" all_running "$diff"
    capture scontrol_show_job_d_o_two_nodes_gpu_idx scontrol -d show job -o "$diff"
    capture scontrol_show_job_d_two_nodes_gpu_idx scontrol -d show job "$diff"
    scancel "$hold" "$diff"
    wait_for 30 "jobs $hold/$diff done" all_finished "$hold" "$diff"
    same=$(submit -J xloop-two-gpus -N2 -w node2,node3 --gres=gpu:1 --wrap 'srun sleep 300')
    wait_for 30 "job $same running" all_running "$same"
    capture scontrol_show_job_d_o_two_nodes_gpu_same scontrol -d show job -o "$same"
    scancel "$same"
}
if [[ -n $only_gpus ]]; then
    capture_gpu_indexes
    msg "done: $OUT"
    exit 0
fi

sacct_capture() {
    # sacct_capture NAME ID [sacct flags]: once its rows have end times
    [[ -n $acct ]] || return 0
    local name=$1 id=$2
    shift 2
    wait_for 30 "job $id in sacct" in_sacct "$id" "$(job_field "$id" JobName)"
    capture "$name" sacct -P -n "$@" -j "$id" -o "$SACCT_FIELDS"
}

# --- 1. a node lost under a job that cannot be requeued: NODE_FAIL 0:0 ----
nf=$(submit -J xloop-nodefail --no-requeue --gres=gpu:1 --comment 'xloop:s/nf#1:tok1' --wrap 'sleep 300')
rq=$(submit -J xloop-requeue --requeue --open-mode=append --gres=gpu:1 --comment 'xloop:s/rq#1:tok2' \
    --wrap 'echo start $SLURMD_NODENAME ${SLURM_RESTART_COUNT:-0}; sleep 20')
wait_for 30 "jobs $nf/$rq running" all_running "$nf" "$rq"
lost=$( (running_on "$nf"; running_on "$rq") | sort -u)
for n in $lost; do tc kill-node "$n"; done
wait_for 90 "job $nf NODE_FAIL" state_is "$nf" NODE_FAIL
expect "$nf" ExitCode 0:0
capture scontrol_show_job_o_node_fail scontrol show job -o "$nf"
# --- 2. the requeueable one runs again under its id ------------------------
wait_for 90 "job $rq running again" restarted "$rq"
capture scontrol_show_job_o_requeued_running scontrol show job -o "$rq"
capture squeue_h_o_requeued squeue -h -r -o "$SQUEUE_FMT" -j "$rq"
for n in $lost; do tc start-node "$n"; done
wait_for 60 "job $rq done" finished "$rq"
capture scontrol_show_job_o_requeued_done scontrol show job -o "$rq"
sacct_capture sacct_P_n_node_fail "$nf"
sacct_capture sacct_P_n_requeued "$rq"
sacct_capture sacct_P_n_D_requeued "$rq" -D

# --- 3. across two nodes: srun on both; a step failing on the second -------
two=$(submit -J xloop-two -N2 --comment 'xloop:s/two#1:tok3' --wrap 'srun hostname')
bad=$(submit -J xloop-two-bad -N2 --comment 'xloop:s/bad#1:tok4' \
    --wrap 'srun bash -c "[ \$SLURM_NODEID = 1 ] && exit 3; exit 0"; exit 0')
wait_for 60 "jobs $two/$bad done" all_finished "$two" "$bad"
capture scontrol_show_job_o_two_nodes scontrol show job -o "$two"
capture scontrol_show_job_o_two_nodes_step_failed scontrol show job -o "$bad"
# -d adds DerivedExitCode (3:0 here), which slurmctld keeps with accounting or
# without (the _noacct capture beside it was made on a cluster without)
capture scontrol_show_job_d_o_two_nodes_step_failed scontrol -d show job -o "$bad"
sacct_capture sacct_P_n_two_nodes "$two"
sacct_capture sacct_P_n_two_nodes_step_failed "$bad"

# --- 4. preemption: gpu preempts low (REQUEUE) and lowcancel (CANCEL) ------
gpus=$(scontrol show node node1 | grep -o 'Gres=gpu:[0-9]*' | cut -d: -f2)
lo=$(submit -J xloop-low -p low -w node1 --gres="gpu:$gpus" --comment 'xloop:s/lo#1:tok5' --wrap 'sleep 300')
lc=$(submit -J xloop-lowcancel -p lowcancel -w node2 --gres="gpu:$gpus" --comment 'xloop:s/lc#1:tok6' --wrap 'sleep 300')
wait_for 30 "jobs $lo/$lc running" all_running "$lo" "$lc"
hi1=$(submit -J xloop-high -w node1 --gres="gpu:$gpus" --wrap 'sleep 5')
hi2=$(submit -J xloop-high -w node2 --gres="gpu:$gpus" --wrap 'sleep 5')
wait_for 60 "job $lc preempted" state_is "$lc" PREEMPTED
capture scontrol_show_job_o_preempted_cancel scontrol show job -o "$lc"
wait_for 60 "job $lo requeued" requeued "$lo"
capture scontrol_show_job_o_preempted_requeue scontrol show job -o "$lo"
capture squeue_h_o_preempted_requeue squeue -h -r -o "$SQUEUE_FMT" -j "$lo"
scancel "$lo" "$hi1" "$hi2" 2>/dev/null || true
sacct_capture sacct_P_n_preempted_cancel "$lc"
capture_gpu_indexes
msg "done: $OUT"
