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
scontrol update nodename="$NODE" state=drain reason='xloop capture: disk almost full'
capture sinfo_R sinfo -R -h -o '%n|%E|%H'
scontrol update nodename="$NODE" state=resume
wait_for 30 "node $NODE back to idle" node_idle

rm -rf "$WORK"
msg "all checks passed; fixtures in $OUT"
