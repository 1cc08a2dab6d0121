#!/bin/bash
# naive-poller.sh DIR N EVERY: the way people drive a study without xloop
# (a Nextflow-style executor, a sleep loop): submit one job with sbatch,
# then poll squeue every EVERY seconds until the user's queue is empty,
# then submit the next. The job is DIR/job.sh with X=i for run i.
# Job ids go to DIR/ids, one per line. Runs as the benchmark user.
set -u
dir=$1 n=$2 every=$3
me=$(id -un)
for i in $(seq 1 "$n"); do
	r=$dir/run$i
	mkdir -p "$r"
	sed "s/^X=0\$/X=$i/" "$dir/job.sh" >"$r/job.sh"
	sbatch --parsable --export="ALL,XLOOP_RUN_DIR=$r" -p gpu --gres=gpu:1 -c 1 \
		--mem=100M -t 00:05:00 -J "naive-$i" -D "$r" -o "$r/slurm-%j.out" \
		"$r/job.sh" | cut -d';' -f1 >>"$dir/ids" || exit 1
	[ "$i" -eq "$n" ] && break
	while sleep "$every"; do
		[ -z "$(squeue -h -u "$me" -o %i)" ] && break
	done
done
