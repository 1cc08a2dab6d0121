#!/bin/sh
# shim.sh DIR LOG: fill DIR with one wrapper per Slurm client command; each
# appends "NAME ARGS..." to LOG and execs the real /usr/bin/NAME. Prepend
# DIR to PATH for one process only to count the Slurm calls it makes
# (never put wrappers in /usr/bin). Used by bench/calls.sh and t1800.
set -eu
dir=$1 log=$2
mkdir -p "$dir"
for c in sbatch squeue sacct scontrol sinfo scancel srun salloc sstat sprio sshare sacctmgr sattach; do
	cat >"$dir/$c" <<EOF
#!/bin/sh
printf '%s\n' "$c \$*" >>'$log'
exec /usr/bin/$c "\$@"
EOF
	chmod 755 "$dir/$c"
done
: >"$log"
chmod 666 "$log"
