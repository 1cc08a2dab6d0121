#!/usr/bin/env bash
# testcluster.sh - a private, single-node Slurm cluster on loopback for
# xloop's integration tests and demos.
#
#   testcluster.sh up [--accounting] [--gpus N|A,B,..] [--nodes N]   start (idempotent)
#   testcluster.sh down                stop what `up` started
#   testcluster.sh status              show what runs; exit 0 if up, 3 if not
#   testcluster.sh env                 print exports for clients (eval it)
#   testcluster.sh adduser NAME        add NAME to the accounting DB (if on)
#   testcluster.sh kill-node NAME      (--nodes) lose a node; start-node NAME brings it back
#
# Everything lives under one directory, ${XLOOP_TESTCLUSTER_DIR:-/tmp/xloop-testcluster}:
# configs, controller state, slurmd spool, logs, pid files, a private munge
# key and socket and (with --accounting) a private MariaDB.  The system's
# /etc/slurm, /etc/munge and MariaDB are never touched.  Daemons are started
# directly (no systemd) and tracked by pid files under <dir>/run, written
# by this script alone (atomically) and trusted only for a live process of
# the right program with this cluster's mark in its environment. The
# daemons' own pid files are under <dir>/run/daemons: a daemon truncates
# and rewrites its file while it starts, and a reader of that file could
# take a healthy daemon for dead (a slurmd was stopped 28 ms after its start
# that way).
#
# Ports (all bound to 127.0.0.1): slurmctld 16817, slurmd 16818,
# slurmdbd 16819, MariaDB 13306 (plus XLOOP_TESTCLUSTER_PORT_OFFSET; ops/slurm/
# chroot-cluster.sh runs one cluster per Slurm version, offsets 10 to 30).
set -euo pipefail
umask 022

readonly PROG=${0##*/}
TC_DIR=${XLOOP_TESTCLUSTER_DIR:-/tmp/xloop-testcluster}
TC_DIR=${TC_DIR%/}
readonly TC_DIR
readonly TIMEOUT=${XLOOP_TESTCLUSTER_TIMEOUT:-60}
# XLOOP_TESTCLUSTER_CGROUPS=no forces the no-cgroup fallback (for testing it).

readonly CLUSTER_NAME=xlooptest
readonly ACCOUNT=xloop
# XLOOP_TESTCLUSTER_PORT_OFFSET=N moves every port up by N, so a second
# cluster (its own XLOOP_TESTCLUSTER_DIR) can run beside the first.
readonly PORT_OFFSET=${XLOOP_TESTCLUSTER_PORT_OFFSET:-0}
[[ $PORT_OFFSET =~ ^[0-9]+$ ]] || { echo "testcluster.sh: error: XLOOP_TESTCLUSTER_PORT_OFFSET must be a number" >&2; exit 1; }
readonly CTLD_PORT=$((16817 + PORT_OFFSET))
readonly SLURMD_PORT=$((16818 + PORT_OFFSET))
readonly DBD_PORT=$((16819 + PORT_OFFSET))
readonly DB_PORT=$((13306 + PORT_OFFSET))

readonly ETC_DIR=$TC_DIR/etc
readonly CONF=$ETC_DIR/slurm.conf
readonly DBD_CONF=$ETC_DIR/slurmdbd.conf
readonly RUN_DIR=$TC_DIR/run
# The daemons' own pid files (SlurmdPidFile, --pid-file, ...): never read
# for liveness, see above.
readonly DAEMON_PID_DIR=$RUN_DIR/daemons
readonly LOG_DIR=$TC_DIR/log
readonly STATE_DIR=$TC_DIR/state/slurmctld
readonly SPOOL_DIR=$TC_DIR/state/slurmd
readonly MUNGE_DIR=$TC_DIR/munge
readonly MUNGE_KEY=$MUNGE_DIR/munge.key
readonly MUNGE_SOCKET=$MUNGE_DIR/munge.socket.2
readonly DB_DIR=$TC_DIR/mariadb
readonly DB_DATA=$DB_DIR/data
readonly DB_SOCKET=$DB_DIR/mysqld.sock
readonly DB_PASS_FILE=$DB_DIR/slurm-db-password
readonly GPU_DEV_DIR=$TC_DIR/dev
readonly PROFILE_FILE=$RUN_DIR/profile

# Marker put into every daemon's environment; lets us recognise processes
# of this cluster that lost their pid file (crashed runs).
readonly OWNER_MARK="XLOOP_TESTCLUSTER_OWNER=$TC_DIR"

# Stop order; start order is the reverse.
readonly ALL_DAEMONS=(slurmd slurmctld slurmdbd mariadbd munged)

export SLURM_CONF=$CONF

NODE=$(hostname -s)
readonly NODE

# Set by write_configs: "cgroup" or "linuxproc".
TRACK_MODE=
# Fake GPUs on the node (up --gpus N).
GPUS=1
# The multi-node profile (up --nodes N): NODES, node_name, kill-node, ...
# shellcheck source=testcluster-nodes.sh
. "$(dirname "${BASH_SOURCE[0]}")/testcluster-nodes.sh"

msg() { printf '%s: %s\n' "$PROG" "$*"; }
warn() { printf '%s: WARNING: %s\n' "$PROG" "$*" >&2; }
die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}

usage() {
    cat <<EOF
usage: $PROG up [--accounting] [--gpus N|A,B,..] [--nodes N] | down | status | env |
       adduser NAME | restart-ctld | kill-daemon NAME SIGNAL | start-daemon NAME |
       kill-node NAME | start-node NAME [--no-wait]

  up [--accounting] [--gpus N|A,B,..] [--nodes N]
                     start a private single-node Slurm (plus MariaDB and
                     slurmdbd with --accounting) with N fake GPUs (default 1;
                     the node declares 2 CPUs per GPU at least); with
                     --nodes N (2 to 9) nodes node1..nodeN (--gpus GPUs each,
                     or one count a node: --nodes 3 --gpus 1,2,2),
                     and the preemptible partitions low (REQUEUE) and
                     lowcancel (CANCEL) under gpu; idempotent;
                     restarts if the running cluster has another profile;
                     a failed bring-up is tried once more from scratch
  down               stop every daemon that 'up' started (by pid file)
  status             print what runs; exit 0 if the cluster is up, 3 if not
  env                print 'export SLURM_CONF=...' for eval in a client shell
  adduser NAME       add user NAME to account '$ACCOUNT' (accounting only)
  restart-ctld       stop and start slurmctld only (jobs and slurmd keep running)
  kill-daemon NAME SIGNAL
                     send SIGNAL (TERM, KILL) to slurmctld or slurmd and wait
                     until it is gone (faults for tests/soak; jobs keep running)
  start-daemon NAME  start slurmctld or slurmd again after kill-daemon
  kill-node NAME     (--nodes) SIGKILL node NAME's slurmd and every process
                     of its namespace (its jobs): the node is lost
  start-node NAME [--no-wait]
                     start node NAME's slurmd again; waits until it is back

cluster directory: $TC_DIR  (set XLOOP_TESTCLUSTER_DIR to change)
EOF
}

require_root() {
    if [[ $EUID -ne 0 ]]; then
        die "'$PROG $1' must run as root (the test cluster's daemons run as root); try: sudo $0 $1"
    fi
}

now() { printf '%s' "$EPOCHREALTIME"; }

elapsed_since() {
    # Seconds since $1 (an EPOCHREALTIME value), one decimal.
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

# ---------------------------------------------------------------------------
# process helpers

pid_file() { printf '%s/%s.pid' "$RUN_DIR" "$1"; }

record_pid() {
    # Write the pid file of daemon $1 (pid $2) atomically: a reader never
    # finds it empty or half written.
    local file
    file=$(pid_file "$1")
    printf '%s\n' "$2" >"$file.tmp"
    mv -f "$file.tmp" "$file"
}

pid_alive() {
    # True if $1 is a live (non-zombie) process.
    local pid=$1 stat
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    { read -r stat <"/proc/$pid/stat"; } 2>/dev/null || return 1
    stat=${stat##*) }
    [[ ${stat:0:1} != Z && ${stat:0:1} != X ]]
}

comm_matches() {
    # True if process $1 runs the program expected for daemon $2.
    local comm
    { read -r comm <"/proc/$1/comm"; } 2>/dev/null || return 1
    case $2 in
        mariadbd) [[ $comm == mariadbd || $comm == mysqld ]] ;;
        slurmd-*) [[ $comm == slurmd ]] ;;
        *) [[ $comm == "$2" ]] ;;
    esac
}

marked() {
    # True if process $1 carries this cluster's mark in its environment.
    { tr '\0' '\n' <"/proc/$1/environ"; } 2>/dev/null | grep -qxF "$OWNER_MARK"
}

pid_in() {
    # pid_in FILE NAME: print the pid FILE holds if it is a live process of
    # daemon NAME's program and (root can tell) of this cluster: a pid file
    # left by an earlier cluster may name a process of another one now.
    local pid
    [[ -r $1 ]] || return 1
    read -r pid <"$1" 2>/dev/null || return 1
    pid_alive "$pid" && comm_matches "$pid" "$2" || return 1
    ((EUID != 0)) || marked "$pid" || return 1
    printf '%s\n' "$pid"
}

daemon_pid() {
    # Print the pid of daemon $1 from its pid file (pid_in); fail otherwise.
    pid_in "$(pid_file "$1")" "$1"
}

wait_gone() {
    # Wait up to $2 seconds for pid $1 to disappear.
    local pid=$1 deadline=$((SECONDS + $2))
    while pid_alive "$pid"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

terminate_pid() {
    # TERM, wait, then KILL.  $1 pid, $2 label, $3 grace seconds.
    local pid=$1 label=$2 grace=${3:-20}
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" "$grace"; then
        warn "$label (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        wait_gone "$pid" 10 || die "$label (pid $pid) survived SIGKILL"
    fi
}

stop_daemon() {
    local name=$1 pid grace=20
    [[ $name == mariadbd ]] && grace=60
    if pid=$(daemon_pid "$name"); then
        terminate_pid "$pid" "$name" "$grace"
        msg "stopped $name (pid $pid)"
    fi
    rm -f "$(pid_file "$name")"
}

leftover_pids() {
    # Processes of this cluster that are not (or no longer) tracked by pid
    # files: recognised by program name plus the marker in their environment.
    # (read, not cat: a process for each of the machine's processes, at
    # every up and down, was the suite's most started program)
    local d pid comm
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        [[ $pid == "$$" ]] && continue
        { read -r comm <"$d/comm"; } 2>/dev/null || continue
        case $comm in
            munged | mariadbd | mysqld | slurmdbd | slurmctld | slurmd | slurmstepd) ;;
            *) continue ;;
        esac
        pid_alive "$pid" || continue
        if marked "$pid"; then
            printf '%s %s\n' "$pid" "$comm"
        fi
    done
}

descendants() {
    # All descendants of pid $1.
    ps -e -o pid= -o ppid= | awk -v root="$1" '
        { kids[$2] = kids[$2] " " $1 }
        END {
            n = split(kids[root], queue, " ")
            for (i = 1; i <= n; i++) {
                print queue[i]
                m = split(kids[queue[i]], more, " ")
                for (j = 1; j <= m; j++) queue[++n] = more[j]
            }
        }'
}

job_cgroup_pids() {
    # Processes in the freezer cgroup of the job that slurmstepd $1 manages.
    local path dir
    path=$(awk -F: '$2 ~ /(^|,)freezer(,|$)/ { print $3 }' "/proc/$1/cgroup" 2>/dev/null) || return 0
    [[ $path =~ ^(/.*/job_[0-9]+)(/|$) ]] || return 0
    dir=/sys/fs/cgroup/freezer${BASH_REMATCH[1]}
    [[ -d $dir ]] || return 0
    find "$dir" -name freezer.state -exec sh -c 'echo THAWED >"$1"' _ {} \; 2>/dev/null || true
    find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null || true
}

kill_leftovers() {
    # Stop processes of this cluster that have no (valid) pid file, job
    # step daemons first.  slurmstepd ignores SIGTERM, so a stray step daemon
    # and the job processes it managed are killed outright.
    local pid comm victims
    while read -r pid comm; do
        [[ -n $pid ]] || continue
        msg "stopping leftover $comm (pid $pid) of this cluster"
        if [[ $comm == slurmstepd ]]; then
            victims=$( (descendants "$pid"; job_cgroup_pids "$pid") | sort -u)
            kill -KILL "$pid" 2>/dev/null || true
            if [[ -n $victims ]]; then
                # shellcheck disable=SC2086 # one pid per word
                kill -KILL $victims 2>/dev/null || true
            fi
            wait_gone "$pid" 10 || warn "slurmstepd (pid $pid) survived SIGKILL"
        else
            terminate_pid "$pid" "$comm" 20
        fi
    done < <(leftover_pids | awk '
        { rank = index("slurmstepd slurmd slurmctld slurmdbd mariadbd mysqld munged", $2) }
        { print rank, $0 }' | sort -n -k1,1 | cut -d' ' -f2-)
}

show_start_output() {
    # show_start_output LOG OUT: what the daemon printed since its last
    # start marker in OUT (stdout/stderr); the tail of LOG if that is empty.
    local log=$1 out=${2:-} section=""
    if [[ -n $out && -s $out ]]; then
        section=$(awk '/^==== .* starting ====$/ { buf = ""; next } { buf = buf $0 "\n" } END { printf "%s", buf }' "$out" | tail -n 25)
    fi
    if [[ -n $section ]]; then
        printf '%s: ---- last output (%s) ----\n%s\n' "$PROG" "$out" "$section" >&2
    elif [[ -s $log ]]; then
        printf '%s: ---- last lines of %s ----\n' "$PROG" "$log" >&2
        tail -n 25 "$log" >&2
    fi
    printf '%s: full log: %s\n' "$PROG" "$log" >&2
}

STARTED_THIS_RUN=()

start_failed() {
    # $1 daemon name, $2 reason, rest: log files to show.
    local name=$1 reason=$2
    shift 2
    printf '%s: error: %s %s\n' "$PROG" "$name" "$reason" >&2
    show_start_output "$@"
    if ((${#STARTED_THIS_RUN[@]})); then
        printf '%s: stopping the daemons started so far\n' "$PROG" >&2
        stop_all >/dev/null 2>&1 || true
    fi
    printf '%s: error: bring-up failed; logs are in %s\n' "$PROG" "$LOG_DIR" >&2
    exit 1
}

start_daemon() {
    # start_daemon NAME LOGFILE READY_FN TIMEOUT -- CMD...
    # Runs CMD in the foreground mode of the daemon, detached in its own
    # session, records its pid and waits until READY_FN succeeds.
    local name=$1 log=$2 ready=$3 timeout=$4 out pid deadline
    shift 5
    out=$LOG_DIR/$name.out
    printf '==== %s: %s starting ====\n' "$(date '+%F %T')" "$name" >>"$out"
    env "$OWNER_MARK" setsid "$@" </dev/null >>"$out" 2>&1 9>&- &
    pid=$!
    record_pid "$name" "$pid"
    STARTED_THIS_RUN+=("$name")
    deadline=$((SECONDS + timeout))
    # ready once it runs the daemon's program (not env or setsid on their
    # way to it: daemon_pid takes those for a dead daemon) and READY_FN says so
    until comm_matches "$pid" "$name" && "$ready"; do
        if ! pid_alive "$pid"; then
            wait "$pid" 2>/dev/null || true
            start_failed "$name" "exited during start-up" "$log" "$out"
        fi
        if ((SECONDS >= deadline)); then
            start_failed "$name" "did not become ready within ${timeout}s" "$log" "$out"
        fi
        sleep 0.2
    done
    msg "started $name (pid $pid)"
}

# ---------------------------------------------------------------------------
# state of the cluster

current_profile() {
    [[ -r $PROFILE_FILE ]] && cat "$PROFILE_FILE"
}

profile_daemons() {
    local slurmd=slurmd
    [[ $1 != *+nodes* ]] || slurmd=$(nodes_list | sed 's/^/slurmd-/')
    if [[ ${1%%+*} == accounting ]]; then
        printf '%s\n' munged mariadbd slurmdbd slurmctld "$slurmd"
    else
        printf '%s\n' munged slurmctld "$slurmd"
    fi
}

cluster_is_up() {
    # True if a profile is recorded and all of its daemons run.
    local profile d
    profile=$(current_profile) || return 1
    [[ -n $profile ]] || return 1
    while read -r d; do
        daemon_pid "$d" >/dev/null || return 1
    done < <(profile_daemons "$profile")
}

anything_running() {
    local d
    for d in "${ALL_DAEMONS[@]}"; do
        daemon_pid "$d" >/dev/null && return 0
    done
    [[ -n $(leftover_pids) ]]
}

# ---------------------------------------------------------------------------
# preparation

check_dir_ownership() {
    if [[ -e $TC_DIR && ! -O $TC_DIR ]]; then
        die "$TC_DIR exists but is not owned by root; remove it or set XLOOP_TESTCLUSTER_DIR"
    fi
}

check_parents_traversable() {
    # Unprivileged users must reach slurm.conf and the munge socket.
    local p=$TC_DIR
    while p=$(dirname "$p"); [[ $p != / ]]; do
        if [[ $(stat -c %A "$p") != ?????????[xt] ]]; then
            warn "$p is not traversable by other users; non-root users will not be able to use the cluster"
        fi
    done
}

prepare_dirs() {
    check_dir_ownership
    mkdir -p "$TC_DIR" "$ETC_DIR" "$RUN_DIR" "$DAEMON_PID_DIR" "$LOG_DIR" "$STATE_DIR" \
        "$SPOOL_DIR" "$MUNGE_DIR" "$TC_DIR/dev"
    chmod 0755 "$TC_DIR" "$ETC_DIR" "$RUN_DIR" "$DAEMON_PID_DIR" "$LOG_DIR" "$MUNGE_DIR" \
        "$TC_DIR/dev" "$TC_DIR/state"
    chmod 0700 "$STATE_DIR"
    chmod 0755 "$SPOOL_DIR"
    check_parents_traversable

    if [[ ! -s $MUNGE_KEY ]]; then
        if command -v mungekey >/dev/null; then
            mungekey --create --keyfile="$MUNGE_KEY" --bits=1024
        else
            dd if=/dev/urandom of="$MUNGE_KEY" bs=128 count=1 status=none
        fi
        msg "generated munge key $MUNGE_KEY"
    fi
    chmod 0600 "$MUNGE_KEY"

    # Slurm wants the GRES file to be a device; a node with the numbers of
    # /dev/null is enough for a fake GPU.
    local i dev
    ((NODES == 1)) || nodes_prepare
    for ((i = 0; i < GPUS; i++)); do
        dev=$GPU_DEV_DIR/gpu$i
        if [[ ! -c $dev ]]; then
            rm -f "$dev"
            mknod -m 0666 "$dev" c 1 3 ||
                die "cannot create the fake GPU device node $dev (mknod c 1 3); Slurm refuses a plain file as a GRES"
        fi
    done
}

cgroups_usable() {
    # Cheap check for a working cgroup v1 memory + freezer hierarchy.
    local ctrl probe
    [[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) != cgroup2fs ]] || return 1
    for ctrl in memory freezer cpuset cpuacct; do
        grep -qE "^[^ ]+ /sys/fs/cgroup/[^ ]+ cgroup [^ ]*\\b$ctrl\\b" /proc/mounts || return 1
    done
    probe=/sys/fs/cgroup/memory/xloop-testcluster-probe.$$
    mkdir "$probe" 2>/dev/null || return 1
    if ! echo 67108864 >"$probe/memory.limit_in_bytes" 2>/dev/null; then
        rmdir "$probe"
        return 1
    fi
    rmdir "$probe" 2>/dev/null || true
    probe=/sys/fs/cgroup/freezer/xloop-testcluster-probe.$$
    mkdir "$probe" 2>/dev/null || return 1
    rmdir "$probe" 2>/dev/null || true
}

# The installed Slurm's version: "22.05.8" from "slurm 22.05.8" (slurmd -V).
slurm_version() {
    local v
    v=$(slurmd -V 2>/dev/null) || return 0
    printf '%s\n' "${v##* }"
}

write_configs() {
    local profile=${1%%+*} cpus mem_total_mb real_mem def_mem overrides="" cores=yes
    cpus=$(nproc)
    if ((GPUS > 1 && cpus < 2 * GPUS)); then
        # More GPUs than the cores can feed: declare 2 CPUs per GPU (slurmd
        # takes the configured numbers; jobs share the real cores).
        cpus=$((2 * GPUS))
        overrides="SlurmdParameters=config_overrides"
        cores=no
    fi
    mem_total_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
    # Leave ~5% (at least 256 MB) for the OS so slurmd never finds less
    # memory than configured.
    real_mem=$((mem_total_mb - (mem_total_mb / 20 > 256 ? mem_total_mb / 20 : 256)))
    # Jobs without --mem get this much per CPU; keep it small so several
    # default jobs fit side by side.
    def_mem=$((real_mem / cpus < 1024 ? real_mem / cpus : 1024))

    local proctrack task jobacct prolog_flags=""
    if [[ ${XLOOP_TESTCLUSTER_CGROUPS:-auto} != no ]] && ((NODES == 1)) && cgroups_usable; then
        TRACK_MODE=cgroup
        proctrack=proctrack/cgroup
        task=task/cgroup
        jobacct=jobacct_gather/cgroup
        prolog_flags="PrologFlags=Contain"
    else
        TRACK_MODE=linuxproc
        warn "cgroup v1 (memory+freezer) is not usable here: falling back to proctrack/linuxproc + task/none; --mem is NOT enforced and no OUT_OF_MEMORY state will be seen"
        proctrack=proctrack/linuxproc
        task=task/none
        jobacct=jobacct_gather/linux
    fi

    # slurmctld binds to the SlurmctldHost address with NoCtldInAddrAny.
    # slurmd/slurmdbd/srun only know NoInAddrAny, which binds to whatever the
    # machine's hostname resolves to: only safe when that is 127.0.0.1.
    local comm_params dbd_comm_params=""
    if [[ $(getent ahostsv4 "$(hostname)" 2>/dev/null | awk 'NR == 1 { print $1 }') == 127.0.0.1 ]]; then
        comm_params="CommunicationParameters=NoCtldInAddrAny,NoInAddrAny"
        dbd_comm_params="CommunicationParameters=NoInAddrAny"
    else
        comm_params="CommunicationParameters=NoCtldInAddrAny"
        msg "note: $(hostname) does not resolve to 127.0.0.1, so slurmd/slurmdbd listen on all addresses (ports $SLURMD_PORT/$DBD_PORT; still protected by the private munge key)"
    fi

    # scrontab where this Slurm ships it (Debian's 24.11 and 26.05 do, 22.05
    # does not): driver.mode scrontab is tested there
    local scron=""
    if command -v scrontab >/dev/null 2>&1; then
        scron="ScronParameters=enable"
    fi

    local acct_lines
    if [[ $profile == accounting ]]; then
        acct_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# munge socket used to authenticate to slurmdbd (ours is not the default one)
AccountingStoragePass=$MUNGE_SOCKET
# keep --comment in the database so sacct -o Comment shows it
AccountingStoreFlags=job_comment
AccountingStorageTRES=gres/gpu
# associations, QOS and their limits hold (a test gives its user a QOS with limits)
AccountingStorageEnforce=limits,qos"
    else
        acct_lines="AccountingStorageType=accounting_storage/none"
    fi

    # one node, or N of them (nodes_config sets these for --nodes)
    local slurmd_paths="SlurmdSpoolDir=$SPOOL_DIR
SlurmdPidFile=$DAEMON_PID_DIR/slurmd.pid
SlurmdLogFile=$LOG_DIR/slurmd.log"
    local auth_info="AuthInfo=socket=$MUNGE_SOCKET" slurmd_timeout=60
    local node_lines="NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mem Gres=gpu:$GPUS State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=04:00:00 State=UP
PartitionName=short Nodes=$NODE MaxTime=00:10:00 State=UP"
    ((NODES == 1)) || nodes_config

    cat >"$CONF.tmp" <<EOF
# Generated by ops/slurm/testcluster.sh ($profile profile) -- do not edit;
# rewritten on every 'up'.
ClusterName=$CLUSTER_NAME
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
$comm_params
SlurmUser=root
SlurmdUser=root

AuthType=auth/munge
$auth_info
CredType=cred/munge

StateSaveLocation=$STATE_DIR
$slurmd_paths
SlurmctldPidFile=$DAEMON_PID_DIR/slurmctld.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
$scron

ReturnToService=2
MinJobAge=300
KillWait=5
InactiveLimit=0
SlurmdTimeout=$slurmd_timeout

SchedulerType=sched/backfill
SchedulerParameters=sched_interval=5,sched_min_interval=100000,bf_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$def_mem

ProctrackType=$proctrack
TaskPlugin=$task
$prolog_flags
JobAcctGatherType=$jobacct
JobAcctGatherFrequency=task=1
JobCompType=jobcomp/none
$acct_lines

GresTypes=gpu
$overrides
$node_lines
EOF
    mv "$CONF.tmp" "$CONF"

    cat >"$ETC_DIR/gres.conf" <<EOF
# Generated by ops/slurm/testcluster.sh: ${NODE_GPUS:-$GPUS} fake GPU(s) (char device nodes).
AutoDetect=off
$( ((NODES > 1)) && nodes_gres_lines ||
        printf 'Name=gpu File=%s/gpu%s' "$GPU_DEV_DIR" "$( ((GPUS > 1)) && printf '[0-%d]' $((GPUS - 1)) || printf 0)")
EOF

    # Without cgroups, Slurm 24.05 and later must be told not to load its
    # cgroup plugin at all; before 21.08 there is no CgroupPlugin key.
    local cgroup_plugin=cgroup/v1
    if [[ $TRACK_MODE == linuxproc ]]; then
        case $(slurm_version) in
            2[01].*) cgroup_plugin= ;;
            2[0-3].* | 24.0[0-4].*) ;;
            *) cgroup_plugin=disabled ;;
        esac
    fi
    cat >"$ETC_DIR/cgroup.conf" <<EOF
# Generated by ops/slurm/testcluster.sh
${cgroup_plugin:+CgroupPlugin=$cgroup_plugin}
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
ConstrainCores=$cores
# The fake GPU shares /dev/null's device numbers: never constrain devices.
ConstrainDevices=no
EOF
    chmod 0644 "$CONF" "$ETC_DIR/gres.conf" "$ETC_DIR/cgroup.conf"

    if [[ $profile == accounting ]]; then
        (
            umask 077
            cat >"$DBD_CONF.tmp" <<EOF
# Generated by ops/slurm/testcluster.sh
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=$NODE
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
$dbd_comm_params
SlurmUser=root
PidFile=$DAEMON_PID_DIR/slurmdbd.pid
LogFile=$LOG_DIR/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=$(cat "$DB_PASS_FILE")
StorageLoc=slurm_acct_db
EOF
        )
        chmod 0600 "$DBD_CONF.tmp"
        mv "$DBD_CONF.tmp" "$DBD_CONF"
    else
        rm -f "$DBD_CONF"
    fi
}

# ---------------------------------------------------------------------------
# readiness checks

munge_ready() {
    [[ -S $MUNGE_SOCKET ]] &&
        munge --socket="$MUNGE_SOCKET" -n 2>/dev/null | unmunge --socket="$MUNGE_SOCKET" >/dev/null 2>&1
}

db_sql() {
    mariadb --no-defaults --skip-ssl --socket="$DB_SOCKET" -uroot "$@"
}

db_ready() {
    [[ -S $DB_SOCKET ]] && db_sql -e 'SELECT 1' >/dev/null 2>&1
}

dbd_ready() {
    sacctmgr -n -P list cluster format=cluster >/dev/null 2>&1
}

ctld_ready() {
    scontrol ping 2>/dev/null | grep -q 'is UP'
}

slurmd_ready() {
    # slurmd itself only needs to be alive; the node state is awaited later.
    true
}

# ---------------------------------------------------------------------------
# daemons

start_munged() {
    # munged daemonises itself (so it writes --log-file and --pid-file); its
    # parent only exits once the daemon is set up, with a failure status if
    # it could not start.
    local out=$LOG_DIR/munged.out log=$LOG_DIR/munged.log pid deadline
    rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock" "$DAEMON_PID_DIR/munged.pid" "$(pid_file munged)"
    printf '==== %s: munged starting ====\n' "$(date '+%F %T')" >>"$out"
    STARTED_THIS_RUN+=(munged)
    if ! env "$OWNER_MARK" munged \
        --socket="$MUNGE_SOCKET" \
        --key-file="$MUNGE_KEY" \
        --pid-file="$DAEMON_PID_DIR/munged.pid" \
        --log-file="$log" \
        --seed-file="$MUNGE_DIR/munged.seed" \
        </dev/null >>"$out" 2>&1 9>&-; then
        start_failed munged "failed to start" "$log" "$out"
    fi
    deadline=$((SECONDS + 15))
    until pid=$(pid_in "$DAEMON_PID_DIR/munged.pid" munged) && munge_ready; do
        ((SECONDS < deadline)) || start_failed munged "did not become ready within 15s" "$log" "$out"
        sleep 0.1
    done
    record_pid munged "$pid"
    chmod 0755 "$MUNGE_DIR"
    msg "started munged (pid $pid)"
}

ensure_db_password() {
    mkdir -p "$DB_DIR"
    chmod 0700 "$DB_DIR"
    if [[ ! -s $DB_PASS_FILE ]]; then
        (
            umask 077
            head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DB_PASS_FILE"
        )
    fi
}

db_binary() {
    local b
    for b in mariadbd mysqld; do
        if command -v "$b" >/dev/null; then
            command -v "$b"
            return 0
        fi
        [[ -x /usr/sbin/$b ]] && {
            printf '/usr/sbin/%s\n' "$b"
            return 0
        }
    done
    die "no mariadbd/mysqld found (apt-get install mariadb-server)"
}

start_mariadb() {
    local install
    mkdir -p "$DB_DIR"
    chmod 0700 "$DB_DIR"
    if [[ ! -d $DB_DATA/mysql ]]; then
        install=$(command -v mariadb-install-db || command -v mysql_install_db) ||
            die "mariadb-install-db not found (apt-get install mariadb-server)"
        rm -rf "$DB_DATA"
        msg "initialising MariaDB data directory $DB_DATA"
        if ! "$install" --no-defaults --datadir="$DB_DATA" --user=root \
            --auth-root-authentication-method=socket --skip-test-db \
            --skip-name-resolve >"$LOG_DIR/mariadb-install.log" 2>&1; then
            start_failed mariadb-install-db "failed" "$LOG_DIR/mariadb-install.log"
        fi
    fi
    rm -f "$DB_SOCKET" "$DB_SOCKET.lock"
    # --skip-ssl: MariaDB 11.8 (trixie, sid) turns TLS on by itself, and
    # slurmdbd 24.11/26.05 then fails its first query ("Number of columns in
    # result ... exceeds"); loopback needs no TLS.
    start_daemon mariadbd "$LOG_DIR/mariadbd.log" db_ready 90 -- \
        "$(db_binary)" --no-defaults \
        --datadir="$DB_DATA" \
        --socket="$DB_SOCKET" \
        --pid-file="$DAEMON_PID_DIR/mariadbd.pid" \
        --port="$DB_PORT" \
        --bind-address=127.0.0.1 \
        --user=root \
        --log-error="$LOG_DIR/mariadbd.log" \
        --skip-name-resolve \
        --skip-ssl \
        --innodb-buffer-pool-size=256M \
        --innodb-log-file-size=64M \
        --innodb-lock-wait-timeout=900 \
        --max-allowed-packet=64M

    local pass
    pass=$(cat "$DB_PASS_FILE")
    db_sql <<EOF || start_failed mariadbd "rejected the slurm user setup" "$LOG_DIR/mariadbd.log"
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
ALTER USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL PRIVILEGES ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
}

start_slurmdbd() {
    start_daemon slurmdbd "$LOG_DIR/slurmdbd.log" dbd_ready 90 -- slurmdbd -D
}

sacctmgr_has() {
    # sacctmgr_has ENTITY NAME [extra list args...]
    local entity=$1 name=$2
    shift 2
    sacctmgr -n -P list "$entity" "$@" 2>/dev/null | grep -qxF "$name"
}

ensure_user() {
    local user=$1
    if sacctmgr -n -P list assoc where "user=$user" "account=$ACCOUNT" "cluster=$CLUSTER_NAME" \
        format=user 2>/dev/null | grep -qxF "$user"; then
        msg "user $user already has an association with account $ACCOUNT"
        return 0
    fi
    sacctmgr -i add user "$user" "account=$ACCOUNT" "cluster=$CLUSTER_NAME" >/dev/null ||
        die "sacctmgr could not add user $user"
    msg "added user $user to account $ACCOUNT"
}

register_cluster() {
    if ! sacctmgr_has cluster "$CLUSTER_NAME" format=cluster; then
        sacctmgr -i add cluster "$CLUSTER_NAME" >/dev/null ||
            start_failed slurmdbd "refused 'sacctmgr add cluster'" "$LOG_DIR/slurmdbd.log"
        msg "registered cluster $CLUSTER_NAME in slurmdbd"
    fi
    if ! sacctmgr_has account "$ACCOUNT" format=account; then
        sacctmgr -i add account "$ACCOUNT" "cluster=$CLUSTER_NAME" \
            "Description=xloop test account" "Organization=xloop" >/dev/null ||
            start_failed slurmdbd "refused 'sacctmgr add account'" "$LOG_DIR/slurmdbd.log"
        msg "created account $ACCOUNT"
    fi
    ensure_user root >/dev/null
    if [[ -n ${SUDO_USER:-} && $SUDO_USER != root ]]; then
        ensure_user "$SUDO_USER"
    fi
}

start_slurmctld() {
    # A slurmctld 24.11 (or 26.05) first started without accounting keeps a
    # ClusterID of its own in the state, which slurmdbd then refuses ("CLUSTER
    # ID MISMATCH"); with accounting, let it take slurmdbd's.
    if [[ -f $DBD_CONF ]]; then
        rm -f "$STATE_DIR/clustername"
    fi
    start_daemon slurmctld "$LOG_DIR/slurmctld.log" ctld_ready 60 -- \
        slurmctld -D -f "$CONF"
}

start_slurmd() {
    start_daemon slurmd "$LOG_DIR/slurmd.log" slurmd_ready 5 -- \
        slurmd -D -f "$CONF"
}

node_state() {
    sinfo -h -N -n "$NODE" -o %T 2>/dev/null | head -n 1
}

wait_node_idle() {
    local deadline=$((SECONDS + TIMEOUT)) state resumed=0 pid
    while :; do
        state=$(node_state)
        case $state in
            idle | mixed | allocated | completing) return 0 ;;
            *drain* | down*)
                # A drain left over from an earlier run (state is saved):
                # try once to put the node back in service.
                if ((!resumed)) && [[ $state != *'*' ]]; then
                    scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
                    resumed=1
                fi
                ;;
        esac
        pid=$(daemon_pid slurmd) ||
            start_failed slurmd "exited after start-up" "$LOG_DIR/slurmd.log" "$LOG_DIR/slurmd.out"
        if ((SECONDS >= deadline)); then
            printf '%s: error: node %s not idle after %ss (state: %s)\n' \
                "$PROG" "$NODE" "$TIMEOUT" "${state:-unknown}" >&2
            sinfo -R 2>/dev/null >&2 || true
            start_failed slurmd "did not bring node $NODE to idle (see also $LOG_DIR/slurmctld.log)" \
                "$LOG_DIR/slurmd.log"
        fi
        sleep 0.2
    done
}

cancel_all_jobs() {
    # Cancel every job so no slurmstepd survives 'down', then wait for them.
    ctld_ready || return 0
    local ids deadline
    ids=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ') || return 0
    [[ -n ${ids// /} ]] || return 0
    msg "cancelling jobs: $ids"
    # shellcheck disable=SC2086 # word splitting of the id list is intended
    scancel $ids 2>/dev/null || true
    deadline=$((SECONDS + 20))
    while ((SECONDS < deadline)); do
        [[ -z $(squeue -h -t running,completing,configuring -o %i 2>/dev/null) ]] &&
            [[ -z $(leftover_pids | awk '$2 == "slurmstepd"') ]] && return 0
        sleep 0.3
    done
    warn "jobs still running after 20s; stopping daemons anyway"
}

stop_all() {
    local d
    cancel_all_jobs
    nodes_stop
    for d in "${ALL_DAEMONS[@]}"; do
        stop_daemon "$d"
    done
    kill_leftovers
    remove_empty_cgroups
    rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock" "$DB_SOCKET" "$DB_SOCKET.lock" "$PROFILE_FILE"
}

any_slurmd_running() {
    local d comm
    for d in /proc/[0-9]*; do
        { read -r comm <"$d/comm"; } 2>/dev/null || continue
        [[ $comm == slurmd || $comm == slurmstepd ]] && pid_alive "${d#/proc/}" && return 0
    done
    return 1
}

remove_empty_cgroups() {
    # slurmd creates /sys/fs/cgroup/<controller>/slurm_<node>/...; remove the
    # empty directories it left behind (rmdir refuses cgroups that still
    # have processes), but only when no slurmd at all runs on this machine.
    local top
    any_slurmd_running && return 0
    for top in /sys/fs/cgroup/*/"slurm_$NODE" /sys/fs/cgroup/*/slurm; do
        [[ -d $top ]] || continue
        find "$top" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
}

take_lock() {
    mkdir -p "$RUN_DIR"
    exec 9>>"$RUN_DIR/lock"
    flock -w 300 9 || die "another $PROG is busy with $TC_DIR (lock $RUN_DIR/lock)"
}

# ---------------------------------------------------------------------------
# subcommands

cmd_up() {
    local profile=basic arg
    while (($#)); do
        arg=$1
        shift
        case $arg in
            --accounting) profile=accounting ;;
            --gpus)
                gpus_option "${1:-}"
                shift
                ;;
            --nodes)
                nodes_option "${1:-}"
                shift
                ;;
            -h | --help)
                usage
                exit 0
                ;;
            *) die "unknown option for up: $arg" ;;
        esac
    done
    gpus_check
    if [[ -n $NODE_GPUS ]]; then
        profile+="+gpus$NODE_GPUS"
    elif ((GPUS != 1)); then
        profile+="+gpus$GPUS"
    fi
    ((NODES == 1)) || profile+="+nodes$NODES"
    require_root up
    check_dir_ownership
    take_lock

    local cur
    cur=$(current_profile || true)
    if cluster_is_up; then
        if [[ $cur == "$profile" ]]; then
            msg "already up ($profile profile) in $TC_DIR"
            return 0
        fi
        msg "cluster is up with the $cur profile; restarting with the $profile profile"
        stop_all
    elif anything_running; then
        msg "cluster is partly running (a previous run crashed?); stopping it first"
        stop_all
    fi
    kill_leftovers
    check_ports "$profile"

    # A bring-up that failed (its reason and the daemon's output are above;
    # it stopped what it started) is tried once more from scratch: a cause
    # that stays fails again, and up exits 1.
    local try rc
    for try in 1 2; do
        set +e
        (
            set -e
            bring_up "$profile"
        )
        rc=$?
        set -e
        ((rc != 0)) || return 0
        ((try == 2)) || warn "bring-up failed (see above); trying once more from scratch"
    done
    die "the cluster did not come up (2 tries); logs are in $LOG_DIR"
}

profile_ports() {
    # "PORT DAEMON" for every port the daemons of profile $1 listen on.
    printf '%s slurmctld\n%s slurmd\n' "$CTLD_PORT" "$SLURMD_PORT"
    local i
    for ((i = 1; i <= NODES; i++)); do
        ((NODES == 1)) || printf '%s slurmd-%s\n' "$(node_port "$i")" "$(node_name "$i")"
    done
    if [[ ${1%%+*} == accounting ]]; then
        printf '%s slurmdbd\n%s mariadbd\n' "$DBD_PORT" "$DB_PORT"
    fi
}

check_ports() {
    # The ports of profile $1 must be free once this cluster's leftovers are
    # stopped: a daemon that cannot bind its port exits at start-up, so name
    # the process that holds one instead (where ss is installed).
    local port name line
    command -v ss >/dev/null || return 0
    while read -r port name; do
        line=$(ss -Hltnp "sport = :$port" 2>/dev/null | head -n 1)
        [[ -n $line ]] || continue
        [[ $line =~ users:\(\((.*)\)\) ]] && line=${BASH_REMATCH[1]} || line="a process ss cannot name"
        die "port $port ($name's) is in use by $line: another cluster or service on the ports of XLOOP_TESTCLUSTER_PORT_OFFSET=$PORT_OFFSET? stop it, or choose another offset (and XLOOP_TESTCLUSTER_DIR)"
    done < <(profile_ports "$1")
}

bring_up() {
    # Start the daemons of profile $1 and wait until the node is idle.
    local profile=$1 t0
    kill_leftovers
    t0=$(now)
    msg "starting single-node Slurm ($profile profile) in $TC_DIR"
    prepare_dirs
    if [[ ${profile%%+*} == accounting ]]; then
        ensure_db_password
    fi
    write_configs "$profile"
    rm -f "$PROFILE_FILE"

    start_munged
    if [[ ${profile%%+*} == accounting ]]; then
        start_mariadb
        start_slurmdbd
        register_cluster
    fi
    start_slurmctld
    if ((NODES > 1)); then
        nodes_start
        nodes_wait_idle
    else
        start_slurmd
        wait_node_idle
    fi
    printf '%s\n' "$profile" >"$PROFILE_FILE"
    chmod 0644 "$PROFILE_FILE"

    if ((NODES > 1)); then
        local each="$GPUS GRES gpu each"
        [[ -z $NODE_GPUS ]] || each="GRES gpu $NODE_GPUS (a count a node)"
        msg "up in $(elapsed_since "$t0")s: nodes node1..node$NODES idle, $each, partitions gpu (default), short, low (preemptible, REQUEUE) and lowcancel (CANCEL), process tracking: $TRACK_MODE"
    else
        msg "up in $(elapsed_since "$t0")s: node $NODE idle, partitions gpu (default) and short, $GPUS GRES gpu, process tracking: $TRACK_MODE"
    fi
    msg "clients: eval \"\$($0 env)\""
}

cmd_down() {
    require_root down
    if [[ ! -d $TC_DIR ]]; then
        msg "nothing to stop ($TC_DIR does not exist)"
        return 0
    fi
    check_dir_ownership
    take_lock
    if ! anything_running; then
        rm -f "$PROFILE_FILE"
        remove_empty_cgroups
        msg "not running; nothing to stop"
        return 0
    fi
    stop_all
    local d
    for d in "${ALL_DAEMONS[@]}"; do
        if daemon_pid "$d" >/dev/null; then
            die "$d is still running"
        fi
    done
    msg "down"
}

cmd_status() {
    local profile d pid up=0 state
    profile=$(current_profile 2>/dev/null || true)
    cluster_is_up && up=1
    printf 'cluster dir: %s\n' "$TC_DIR"
    printf 'profile:     %s\n' "${profile:-none}"
    for d in munged mariadbd slurmdbd slurmctld slurmd; do
        if pid=$(daemon_pid "$d"); then
            printf '  %-10s running (pid %s)\n' "$d" "$pid"
        else
            printf '  %-10s not running\n' "$d"
        fi
    done
    [[ $profile != *+nodes* ]] || nodes_status
    if daemon_pid slurmctld >/dev/null; then
        state=$(node_state || true)
        [[ $profile == *+nodes* ]] || printf 'node %s:     %s\n' "$NODE" "${state:-unknown}"
        squeue -h -o '  job %i %T %j (%u)' 2>/dev/null || true
    fi
    if ((up)); then
        printf 'status: up\n'
        return 0
    fi
    printf 'status: not up\n'
    return 3
}

cmd_env() {
    printf 'export SLURM_CONF=%q\n' "$CONF"
    printf 'export XLOOP_TESTCLUSTER_DIR=%q\n' "$TC_DIR"
}

cmd_adduser() {
    [[ $# -eq 1 && -n $1 ]] || die "usage: $PROG adduser NAME"
    require_root adduser
    local user=$1
    if ! id "$user" >/dev/null 2>&1; then
        warn "no local user named $user (adding it anyway)"
    fi
    take_lock
    if ! cluster_is_up; then
        printf '%s: error: cluster is not up\n' "$PROG" >&2
        exit 3
    fi
    if [[ $(current_profile) != accounting* ]]; then
        msg "accounting is off; nothing to do for $user"
        return 0
    fi
    ensure_user "$user"
}

cmd_restart_ctld() {
    # Stop slurmctld (it saves its state) and start it again, jobs and
    # slurmd left running: what a site's controller restart looks like.
    require_root restart-ctld
    cluster_is_up || die "the cluster is not up"
    take_lock
    stop_daemon slurmctld
    start_slurmctld
    msg "restarted slurmctld"
}

# The daemons kill-daemon and start-daemon may touch.
fault_daemon() {
    case ${1:-} in
        slurmctld | slurmd) ;;
        *) die "kill-daemon/start-daemon take slurmctld or slurmd, not '${1:-}'" ;;
    esac
}

cmd_kill_daemon() {
    # A fault: the daemon dies by SIGNAL (no state save with KILL); what it
    # started (job steps) keeps running, as on a real node.
    [[ $# -eq 2 && $2 =~ ^(TERM|KILL)$ ]] || die "usage: $PROG kill-daemon slurmctld|slurmd TERM|KILL"
    require_root kill-daemon
    fault_daemon "$1"
    take_lock
    local pid
    pid=$(daemon_pid "$1") || die "$1 is not running"
    kill "-$2" "$pid"
    wait_gone "$pid" 30 || die "$1 (pid $pid) did not end after SIG$2"
    rm -f "$(pid_file "$1")"
    msg "$1 (pid $pid) ended by SIG$2"
}

cmd_start_daemon() {
    [[ $# -eq 1 ]] || die "usage: $PROG start-daemon slurmctld|slurmd"
    require_root start-daemon
    fault_daemon "$1"
    take_lock
    if daemon_pid "$1" >/dev/null; then
        msg "$1 already runs"
        return 0
    fi
    "start_$1"
}

main() {
    local cmd=${1:-}
    [[ $# -gt 0 ]] && shift
    case $cmd in
        up) cmd_up "$@" ;;
        down) cmd_down ;;
        status) cmd_status ;;
        env) cmd_env ;;
        adduser) cmd_adduser "$@" ;;
        restart-ctld) cmd_restart_ctld ;;
        kill-daemon) cmd_kill_daemon "$@" ;;
        start-daemon) cmd_start_daemon "$@" ;;
        kill-node) cmd_kill_node "$@" ;;
        start-node) cmd_start_node "$@" ;;
        -h | --help | help)
            usage
            ;;
        *)
            usage >&2
            exit 2
            ;;
    esac
}

main "$@"
