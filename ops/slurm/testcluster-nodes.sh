# testcluster-nodes.sh - the multi-node profile of testcluster.sh (issue 34),
# sourced by it: `testcluster.sh up --nodes N` runs N slurmds on this one
# machine, each in a UTS namespace of its own (`unshare --uts`, then
# `hostname nodeK`, then `exec slurmd -D`) in the host's network. slurmd finds
# its node by that hostname; every node line says NodeAddr=127.0.0.1 with a
# Port of its own; per-node paths take %n. A job's processes stay in their
# node's namespace, so kill-node finds exactly one node's work.
#
# Partitions of the profile: gpu (default, PriorityTier 2), short, and the
# preemptible low (PriorityTier 1, PreemptMode REQUEUE) and lowcancel
# (PriorityTier 1, PreemptMode CANCEL): a job in gpu preempts them
# (PreemptType preempt/partition_prio). AuthInfo cred_expire=10 lets a
# requeued job start again within seconds; SlurmdTimeout=10 marks a killed
# node down* within about 25 s. Process tracking is linuxproc (no cgroups):
# N slurmds would share the cgroup tree.
# shellcheck shell=bash

# Nodes of the cluster (up --nodes N); 1 is the single-node profile.
NODES=1
# Fake GPUs of each node when they differ (up --nodes 3 --gpus 1,2,2: node1
# has 1, node2 and node3 2), one count a node; "" when each has GPUS.
NODE_GPUS=""
NODE_GPUS_ASKED=0

# The name of node K.
node_name() { printf 'node%d' "$1"; }

# slurmd's port of node K (below the ports of the next slot, 100 up).
node_port() { printf '%d' $((SLURMD_PORT + 40 + $1)); }

# The names of the nodes of the recorded (or asked) profile, one a line.
nodes_list() {
    local n=$NODES i
    [[ $(current_profile 2>/dev/null) =~ \+nodes([0-9]+) ]] && n=${BASH_REMATCH[1]}
    ((n > 1)) || return 0
    for ((i = 1; i <= n; i++)); do node_name "$i"; printf '\n'; done
}

# The node daemons' names in pid files ("slurmd-node1"), whatever the profile.
nodes_daemons_running() {
    local f
    for f in "$RUN_DIR"/slurmd-*.pid; do
        [[ -e $f ]] || continue
        f=${f##*/}
        printf '%s\n' "${f%.pid}"
    done
}

# Parse "--gpus N" or "--gpus A,B,..." (a count a node) for up: sets GPUS
# (the most a node has) and NODE_GPUS (the list, "" when all are equal).
gpus_option() {
    local -a g
    local k
    [[ ${1:-} =~ ^[1-9][0-9]?(,[1-9][0-9]?)*$ ]] ||
        die "--gpus wants a number from 1 to 99, or one such number a node (--gpus 1,2,2)"
    IFS=, read -ra g <<<"$1"
    GPUS=${g[0]} NODE_GPUS=""
    for k in "${g[@]}"; do
        ((k <= GPUS)) || GPUS=$k
        [[ $k == "${g[0]}" ]] || NODE_GPUS=$1
    done
    if ((${#g[@]} > 1)); then NODE_GPUS_ASKED=${#g[@]}; else NODE_GPUS_ASKED=0; fi
}

# After up's options: a GPU count a node wants as many counts as nodes.
gpus_check() {
    ((${NODE_GPUS_ASKED:-0} == 0 || NODE_GPUS_ASKED == NODES)) ||
        die "--gpus with $NODE_GPUS_ASKED counts wants --nodes $NODE_GPUS_ASKED (one count a node)"
}

# The fake GPUs of node K.
node_gpus() {
    local -a g
    if [[ -z $NODE_GPUS ]]; then
        printf '%d' "$GPUS"
        return
    fi
    IFS=, read -ra g <<<"$NODE_GPUS"
    printf '%d' "${g[$1 - 1]}"
}

# Parse "--nodes N" for up: sets NODES.
nodes_option() {
    [[ ${1:-} =~ ^[1-9]$ ]] || die "--nodes wants a number from 1 to 9"
    NODES=$1
}

# Directories and fake GPU device nodes of every node.
nodes_prepare() {
    local i k dev
    for ((i = 1; i <= NODES; i++)); do
        mkdir -p "$SPOOL_DIR/$(node_name "$i")"
        for ((k = 0; k < $(node_gpus "$i"); k++)); do
            dev=$GPU_DEV_DIR/$(node_name "$i")-gpu$k
            if [[ ! -c $dev ]]; then
                rm -f "$dev"
                mknod -m 0666 "$dev" c 1 3 || die "cannot create the fake GPU device node $dev"
            fi
        done
    done
}

# Set write_configs' variables for N nodes (bash's dynamic scope: they are
# its locals): node and partition lines, per-node slurmd paths, preemption.
# shellcheck disable=SC2034,SC2154 # write_configs' locals
nodes_config() {
    local i names="" mem=$((real_mem / NODES))
    slurmd_paths="SlurmdSpoolDir=$SPOOL_DIR/%n
SlurmdPidFile=$DAEMON_PID_DIR/slurmd-%n.pid
SlurmdLogFile=$LOG_DIR/slurmd-%n.log
SrunPortRange=$((40000 + PORT_OFFSET * 10))-$((40000 + PORT_OFFSET * 10 + 99))"
    auth_info="AuthInfo=socket=$MUNGE_SOCKET,cred_expire=10"
    slurmd_timeout=10
    # slurmd in a namespace resolves no hostname of its own: listen on any
    comm_params="CommunicationParameters=NoCtldInAddrAny"
    node_lines=""
    for ((i = 1; i <= NODES; i++)); do
        node_lines+="NodeName=$(node_name "$i") NodeAddr=127.0.0.1 Port=$(node_port "$i") CPUs=$cpus RealMemory=$mem Gres=gpu:$(node_gpus "$i") State=UNKNOWN
"
        names+=${names:+,}$(node_name "$i")
    done
    node_lines+="PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=gpu Nodes=$names Default=YES MaxTime=04:00:00 PriorityTier=2 PreemptMode=OFF State=UP
PartitionName=short Nodes=$names MaxTime=00:10:00 PriorityTier=2 PreemptMode=OFF State=UP
PartitionName=low Nodes=$names MaxTime=04:00:00 PriorityTier=1 PreemptMode=REQUEUE State=UP
PartitionName=lowcancel Nodes=$names MaxTime=04:00:00 PriorityTier=1 PreemptMode=CANCEL State=UP"
}

# gres.conf lines of every node (each with its own count: node_gpus).
nodes_gres_lines() {
    local i f g
    for ((i = 1; i <= NODES; i++)); do
        f=$GPU_DEV_DIR/$(node_name "$i")-gpu
        g=$(node_gpus "$i")
        if ((g > 1)); then f+="[0-$((g - 1))]"; else f+=0; fi
        printf 'NodeName=%s Name=gpu File=%s\n' "$(node_name "$i")" "$f"
    done
}

# Start node K's slurmd in a UTS namespace named after it.
start_node() {
    local name
    name=$(node_name "$1")
    # shellcheck disable=SC2016 # expanded by the inner sh
    start_daemon "slurmd-$name" "$LOG_DIR/slurmd-$name.log" slurmd_ready 5 -- \
        unshare --uts sh -c 'hostname "$1" && exec slurmd -D -f "$2"' sh "$name" "$CONF"
}

# Start every node's slurmd.
nodes_start() {
    local i
    for ((i = 1; i <= NODES; i++)); do start_node "$i"; done
}

# State of node NAME as sinfo prints it.
named_node_state() {
    sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n 1
}

# Wait until node NAME is in service (idle, mixed, allocated); one resume
# of a drain left from an earlier run. $2: seconds.
wait_named_node() {
    local name=$1 deadline=$((SECONDS + $2)) state resumed=0
    while :; do
        state=$(named_node_state "$name")
        case $state in
            idle | mixed | allocated | completing) return 0 ;;
            *drain* | down)
                if ((!resumed)); then
                    scontrol update nodename="$name" state=resume >/dev/null 2>&1 || true
                    resumed=1
                fi
                ;;
        esac
        daemon_pid "slurmd-$name" >/dev/null ||
            start_failed "slurmd-$name" "exited after start-up" "$LOG_DIR/slurmd-$name.log" \
                "$LOG_DIR/slurmd-$name.out"
        if ((SECONDS >= deadline)); then
            printf '%s: error: node %s not idle after %ss (state: %s)\n' \
                "$PROG" "$name" "$2" "${state:-unknown}" >&2
            return 1
        fi
        sleep 0.2
    done
}

# Wait for every node to come into service.
nodes_wait_idle() {
    local name
    while read -r name; do
        wait_named_node "$name" "$TIMEOUT" ||
            start_failed "slurmd-$name" "did not bring node $name to idle" "$LOG_DIR/slurmd-$name.log"
    done < <(nodes_list)
}

# Stop every node's slurmd (by pid file).
nodes_stop() {
    local d
    while read -r d; do stop_daemon "$d"; done < <(nodes_daemons_running)
}

# The pids in the UTS namespace of pid $1: its node's slurmd, step daemons, jobs.
namespace_pids() {
    local ns
    ns=$(ps -o utsns= -p "$1") || return 0
    ps -e -o utsns=,pid= | awk -v ns="$ns" '$1 == ns { print $2 }'
}

# Node NAME of this cluster, or die.
node_arg() {
    [[ ${1:-} =~ ^node[1-9]$ ]] && nodes_list | grep -x "$1" >/dev/null ||
        die "no node '${1:-}' in this cluster (its nodes: $(nodes_list | paste -sd' '))"
}

# kill-node NAME: the node is lost: its slurmd, step daemons and job
# processes (all of its namespace) die by SIGKILL at once. slurmctld marks
# it down* after SlurmdTimeout; its jobs end NODE_FAIL (or are requeued).
cmd_kill_node() {
    [[ $# -eq 1 ]] || die "usage: $PROG kill-node NAME"
    require_root kill-node
    take_lock
    node_arg "$1"
    local pid victims
    pid=$(daemon_pid "slurmd-$1") || die "node $1's slurmd is not running"
    victims=$(namespace_pids "$pid" | tr '\n' ' ')
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $victims 2>/dev/null || true
    wait_gone "$pid" 10 || die "slurmd of $1 (pid $pid) survived SIGKILL"
    rm -f "$(pid_file "slurmd-$1")"
    msg "node $1 lost: killed $(wc -w <<<"$victims") processes of its namespace"
}

# start-node NAME [--no-wait]: its slurmd again (a new namespace of the same
# name); waits until the node is back in service unless --no-wait.
cmd_start_node() {
    [[ $# -ge 1 ]] || die "usage: $PROG start-node NAME [--no-wait]"
    require_root start-node
    take_lock
    node_arg "$1"
    if daemon_pid "slurmd-$1" >/dev/null; then
        msg "node $1 already runs"
        return 0
    fi
    start_node "${1#node}"
    [[ ${2:-} == --no-wait ]] || wait_named_node "$1" "$TIMEOUT" || die "node $1 did not come back"
    msg "node $1 back: $(named_node_state "$1")"
}

# Node states for status.
nodes_status() {
    local name pid
    while read -r name; do
        if pid=$(daemon_pid "slurmd-$name"); then
            printf '  %-10s slurmd running (pid %s), %s\n' "$name" "$pid" "$(named_node_state "$name")"
        else
            printf '  %-10s slurmd not running, %s\n' "$name" "$(named_node_state "$name")"
        fi
    done < <(nodes_list)
}
