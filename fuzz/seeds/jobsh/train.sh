#!/bin/bash
#SBATCH --job-name=lr
#SBATCH --gres=gpu:1
#SBATCH --time=04:00:00
set -euo pipefail

LR=0.001  # learning rate
export EPOCHS=20
readonly SEED="42"
declare -x OPTIM='adam'
BATCH=$((16 * 2))
DATA=${DATA_DIR:-/data}/train
NAME="run-$LR"
WARMUP=$'a\tb';

if [ -n "${DEBUG:-}" ]; then
	LR=0.1
fi

cleanup() {
	local TMP=/tmp/x
	rm -rf "$TMP"
}
trap cleanup EXIT

python train.py --lr "$LR" --epochs "$EPOCHS" > "cv.json"
