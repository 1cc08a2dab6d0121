#!/usr/bin/env bash
# setup.sh - write Slurm configs for a one-GPU home box (slurmctld + slurmd on
# the same desktop) from the templates next to this script.
#
#   sudo ops/slurm/home/setup.sh                 write into /etc/slurm
#   sudo ops/slurm/home/setup.sh --dry-run DIR   write into DIR instead
#
# Values come from the machine (hostname -s, nproc, /proc/meminfo, the first
# /dev/nvidiaN); override them with --hostname, --cpus, --memory-mb,
# --gpu-device, --cluster-name.  An existing file with different content is
# never overwritten: the diff is printed and nothing is written.  No service
# is started; the commands to run next are printed at the end.
set -euo pipefail

readonly PROG=${0##*/}
HERE=$(cd "$(dirname "$0")" && pwd)
readonly HERE
readonly FILES=(slurm.conf gres.conf cgroup.conf)

die() {
    printf '%s: error: %s\n' "$PROG" "$*" >&2
    exit 1
}

usage() {
    cat <<EOF
usage: $PROG [--dry-run DIR] [--hostname NAME] [--cpus N] [--memory-mb MB]
             [--gpu-device PATH] [--cluster-name NAME]

Fills slurm.conf.in, gres.conf.in and cgroup.conf.in from this machine and
writes them into /etc/slurm (or DIR with --dry-run).  Refuses to replace a
file whose content differs.  Must run as root.
EOF
}

target=/etc/slurm
dry_run=0
host=""
cpus=""
memory_mb=""
gpu=""
cluster=home

while (($#)); do
    case $1 in
        --dry-run)
            [[ $# -ge 2 && -n $2 ]] || die "--dry-run needs a directory"
            target=$2
            dry_run=1
            shift 2
            ;;
        --hostname | --cpus | --memory-mb | --gpu-device | --cluster-name)
            [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value"
            case $1 in
                --hostname) host=$2 ;;
                --cpus) cpus=$2 ;;
                --memory-mb) memory_mb=$2 ;;
                --gpu-device) gpu=$2 ;;
                --cluster-name) cluster=$2 ;;
            esac
            shift 2
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            usage >&2
            die "unknown argument: $1"
            ;;
    esac
done

[[ $EUID -eq 0 ]] || die "must run as root (it writes /etc/slurm); try: sudo $0"

# --- gather the machine's values -------------------------------------------
host=${host:-$(hostname -s)}
[[ $host =~ ^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$ ]] || die "bad host name: '$host'"

cpus=${cpus:-$(nproc)}
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "bad CPU count: '$cpus'"

if [[ -z $memory_mb ]]; then
    total_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
    # Keep 10% (at least 2 GB) for the desktop itself.
    reserve=$((total_mb / 10 > 2048 ? total_mb / 10 : 2048))
    memory_mb=$((total_mb - reserve))
fi
[[ $memory_mb =~ ^[1-9][0-9]*$ ]] || die "bad memory size: '$memory_mb' (not enough memory?)"

if [[ -z $gpu ]]; then
    for dev in /dev/nvidia[0-9]*; do
        [[ -c $dev ]] || continue
        gpu=$dev
        break
    done
    [[ -n $gpu ]] || die "no /dev/nvidia0 (or other /dev/nvidiaN) found: is the NVIDIA driver loaded? (pass --gpu-device PATH to choose one)"
fi
[[ $gpu =~ ^/[A-Za-z0-9_./-]+$ ]] || die "bad GPU device path: '$gpu'"
if [[ ! -c $gpu ]]; then
    if ((dry_run)); then
        printf '%s: warning: %s is not a character device here (Slurm will refuse it)\n' "$PROG" "$gpu" >&2
    else
        die "$gpu is not a character device"
    fi
fi

[[ $cluster =~ ^[a-z0-9_-]+$ ]] || die "bad cluster name: '$cluster' (lower case letters, digits, - and _)"

# Jobs without --mem get an equal share of the memory per CPU, capped at 4 GB.
def_mem=$((memory_mb / cpus))
((def_mem > 4096)) && def_mem=4096

render() {
    # render TEMPLATE: print it with the placeholders filled in.
    sed -e "s|@HOSTNAME@|$host|g" \
        -e "s|@CPUS@|$cpus|g" \
        -e "s|@MEMORY_MB@|$memory_mb|g" \
        -e "s|@DEF_MEM_PER_CPU@|$def_mem|g" \
        -e "s|@GPU_DEVICE@|$gpu|g" \
        -e "s|@CLUSTER_NAME@|$cluster|g" \
        "$1"
}

# --- render everything, compare, then write ---------------------------------
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

conflicts=0
for f in "${FILES[@]}"; do
    [[ -r $HERE/$f.in ]] || die "template $HERE/$f.in is missing"
    render "$HERE/$f.in" >"$work/$f"
    if grep -q '@[A-Z_]*@' "$work/$f"; then
        die "unfilled placeholder in $f: $(grep -o '@[A-Z_]*@' "$work/$f" | sort -u | tr '\n' ' ')"
    fi
    if [[ -e $target/$f ]] && ! cmp -s "$target/$f" "$work/$f"; then
        printf '%s: %s/%s exists and differs from what would be written:\n' "$PROG" "$target" "$f" >&2
        diff -u "$target/$f" "$work/$f" | sed "1,2s|$work/$f|$f (new)|" >&2 || true
        conflicts=1
    fi
done
if ((conflicts)); then
    die "not overwriting existing files in $target; move them away (or merge by hand) and run again"
fi

mkdir -p "$target"
for f in "${FILES[@]}"; do
    if [[ -e $target/$f ]]; then
        printf '%s: %s/%s is already up to date\n' "$PROG" "$target" "$f"
    else
        install -m 0644 "$work/$f" "$target/$f"
        printf '%s: wrote %s/%s\n' "$PROG" "$target" "$f"
    fi
done

cat <<EOF

Filled in: host=$host cpus=$cpus RealMemory=${memory_mb}MB DefMemPerCPU=${def_mem}MB gpu=$gpu cluster=$cluster
EOF

if ((dry_run)); then
    printf '\n(dry run: files are in %s; nothing under /etc was touched)\n' "$target"
    exit 0
fi

cat <<EOF

Next steps (nothing has been started):
  1. munge: Debian's package creates /etc/munge/munge.key; then
       systemctl enable --now munge
       munge -n | unmunge            # should say STATUS: Success
  2. Slurm directories (Debian creates them; check ownership):
       install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/log/slurm
       install -d /var/lib/slurm/slurmd
  3. Start the daemons:
       systemctl enable --now slurmctld slurmd
  4. Check:
       sinfo                          # node $host idle in partitions gpu*, short
       srun --gres=gpu:1 nvidia-smi -L
     If the node stays down/drained: sinfo -R, /var/log/slurm/slurmd.log
EOF
