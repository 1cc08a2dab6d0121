# capture-lib.sh - what capture.sh and capture-version.sh share: sourced
# after PROG, HERE, OUT and RUN_AS are set; checks that the test cluster
# (testcluster.sh, also inside a chroot-cluster.sh tree) is up, exports
# its client settings, makes the user and the work directory WORK.
# shellcheck shell=bash

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}
msg() { printf '%s: %s\n' "$PROG" "$*"; }

[[ $EUID -eq 0 ]] || die "run as root (it submits as $RUN_AS and drains the node)"
"$HERE/testcluster.sh" status >/dev/null ||
    die "test cluster is not up; run: $HERE/testcluster.sh up --accounting"
eval "$("$HERE/testcluster.sh" env)"
if ! id "$RUN_AS" >/dev/null 2>&1; then
    useradd -m "$RUN_AS"
fi
"$HERE/testcluster.sh" adduser "$RUN_AS" >/dev/null
NODE=$(hostname -s)
readonly NODE
WORK=$(runuser -u "$RUN_AS" -- mktemp -d /tmp/xloop-capture.XXXXXX)
readonly WORK
mkdir -p "$OUT"

# Run a Slurm client as the unprivileged user, in $WORK.
as_user() {
    (cd "$WORK" && runuser -u "$RUN_AS" -- env SLURM_CONF="$SLURM_CONF" "$@")
}

# Shell-quote a command line for the '# command:' header.
quote_cmd() {
    local a out=""
    for a in "$@"; do
        if [[ $a =~ ^[A-Za-z0-9_./:=,@+-]+$ ]]; then
            out+="$a "
        else
            out+="'${a//\'/\'\\\'\'}' "
        fi
    done
    printf '%s' "${out% }"
}

# capture NAME CMD... : run CMD as the user, store '# command:' + output.
capture() {
    local name=$1
    shift
    {
        printf '# command: %s\n' "$(quote_cmd "$@")"
        as_user "$@"
    } >"$OUT/$name.txt"
    msg "wrote $OUT/$name.txt"
}

job_field() {
    # job_field ID FIELD -> value from 'scontrol show job -o' (first line).
    scontrol show job -o "$1" 2>/dev/null | head -n 1 | tr ' ' '\n' |
        awk -F= -v k="$2" '$1 == k { sub(/^[^=]*=/, ""); print; exit }'
}

wait_for() {
    # wait_for SECONDS DESCRIPTION CMD... : poll CMD until it succeeds.
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < deadline)) || die "timed out after ${limit}s waiting for $what"
        sleep 0.2
    done
}

state_is() { [[ $(job_field "$1" JobState) == "$2" ]]; }
reason_is() { [[ $(job_field "$1" Reason) == "$2" ]]; }
finished() {
    case $(job_field "$1" JobState) in
        COMPLETED | FAILED | CANCELLED | OUT_OF_MEMORY | TIMEOUT | NODE_FAIL) return 0 ;;
        *) return 1 ;;
    esac
}
node_idle() { [[ $(sinfo -h -N -n "$NODE" -o %T | head -n 1) == idle ]]; }
all_finished() {
    local j
    for j in "$@"; do finished "$j" || return 1; done
}
array_split() {
    # array_split ID RUNNING PENDING: the array has exactly that many tasks in each state.
    [[ $(squeue -h -j "$1" -t running -o %i | wc -l) -eq $2 &&
        $(squeue -h -j "$1" -t pending -o %i | wc -l) -eq $3 ]]
}
pending_reason_is() { squeue -h -j "$1" -t pending -o %r | grep -qxF "$2"; }
queue_empty() { [[ -z $(squeue -h -j "$1" -o %i) ]]; }
in_sacct() {
    # in_sacct ID NAME: the job and its steps are in the database with end
    # times, and the job rows carry NAME.  (Right after a very short job,
    # sacct can briefly show JobName=allocation and a bogus ReqMem: the
    # job-start record arrives after the step records.)
    local rows
    rows=$(sacct -P -n -j "$1" -o JobID,JobName,End 2>/dev/null) || return 1
    [[ -n $rows ]] && ! grep -q '|Unknown$' <<<"$rows" &&
        ! awk -F'|' -v n="$2" '$1 !~ /\./ && $2 != n { bad = 1 } END { exit !bad }' <<<"$rows"
}
expect() {
    # expect ID FIELD VALUE
    local got
    got=$(job_field "$1" "$2")
    [[ $got == "$3" ]] || die "job $1: expected $2=$3, got '$got'"
    msg "job $1: $2=$3 as expected"
}
submit() { as_user sbatch --parsable "$@"; }

# Drain the node, capture sinfo -R (sinfo_R.txt), resume it.
capture_drained() {
    scontrol update nodename="$NODE" state=drain reason='xloop capture: disk almost full'
    capture sinfo_R sinfo -R -h -o '%n|%E|%H'
    scontrol update nodename="$NODE" state=resume
    wait_for 30 "node $NODE back to idle" node_idle
}
