#!/bin/bash
# steps-chain.sh DIR N: runs with steps chained by hand, each training
# `afterany` on the previous run's evaluation (the chain on the last step
# that xloop does not make), for the comparison of bench/gap.sh's mode
# stepsafter. Submits all 2N jobs at once: run i's training DIR/train.sh
# (X=i, one GPU) and its evaluation DIR/eval.sh (no GPU, `afterok` on the
# training), with the resources of the bench's studies. Training ids go to
# DIR/ids, evaluation ids to DIR/eval-ids. Runs as the benchmark user.
set -u
dir=$1 n=$2 prev=
for i in $(seq 1 "$n"); do
	r=$dir/run$i
	mkdir -p "$r"
	sed "s/^X=0\$/X=$i/" "$dir/train.sh" >"$r/train.sh"
	t=$(sbatch --parsable --export="ALL,XLOOP_RUN_DIR=$r" -p gpu --gres=gpu:1 -c 1 \
		--mem=100M -t 00:05:00 -J "chain-$i" -D "$r" -o "$r/train-%j.out" \
		${prev:+--dependency=afterany:$prev} "$r/train.sh" | cut -d';' -f1) || exit 1
	e=$(sbatch --parsable --export="ALL,XLOOP_RUN_DIR=$r" -p gpu -c 1 --mem=100M \
		-t 00:05:00 -J "chain-$i.eval" -D "$r" -o "$r/eval-%j.out" \
		--dependency="afterok:$t" --kill-on-invalid-dep=yes "$dir/eval.sh" | cut -d';' -f1) || exit 1
	echo "$t" >>"$dir/ids"
	echo "$e" >>"$dir/eval-ids"
	prev=$e
done
