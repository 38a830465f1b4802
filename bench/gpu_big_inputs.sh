#!/bin/sh
# Issue 48 on a GPU machine, one command from the repository root: sh bench/gpu_big_inputs.sh
# 1. the long GPU job (bench/long_job.py: training, then a late Triton relu compile error), captured with
#    --max-input-bytes 0 and bisected offline: the lowering named, a verified repro.py, no run of the job, and the
#    replay's peak CUDA memory (above 0: the stand-ins were made on the GPU).
# 2. a job whose failing graph takes BIG_INPUT_GIB (default 1) GiB of inputs, captured three ways and bisected
#    offline: each capture's wall time and peak memory against one plain run, the case's size, the offline answer.
# DEVICE=cpu runs both on the CPU (how it is tested without a GPU); LONG_JOB_SECONDS (default 60) the training.
set -e
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
device=${DEVICE:-cuda}
echo "== 1. the long job on $device, captured with --max-input-bytes 0, bisected offline"
python bench/big_inputs.py --job long --device "$device" --ways="--max-input-bytes 0" --minify
echo "== 2. ${BIG_INPUT_GIB:-1} GiB of graph inputs on $device, captured three ways, bisected offline"
python bench/big_inputs.py --device "$device" --gib "${BIG_INPUT_GIB:-1}"
