#!/bin/bash
#SBATCH --time=08:00:00
#SBATCH -c 4 --mem 16G  # c
#SBATCH -t1:00 -p=gpu --exclusive --job-name "my job"
LR=1
