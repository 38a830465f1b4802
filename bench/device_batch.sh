#!/bin/sh
# The device's figures for issues 46, 47 and 48 in one go on a 2-GPU machine, each part beside the others, every log
# under $OUT (or a temporary folder): sh bench/device_batch.sh
#   big:   bench/gpu_big_inputs.sh (the long GPU job captured with --max-input-bytes 0, bisected offline; 1 GiB inputs)
#   ddp:   bench/spawn_ddp.sh (mp.spawn DDP over NCCL: capture per rank, offline on one GPU, then in place)
#   acc:   tests/gpu_cases/triton_relu_wrong_job.py captured once, bisected offline on GPU 1
#   hang:  tests/gpu_cases/triton_hang_job.py captured with --compile-timeout 30s, bisected offline on GPU 1
# PARTS="big ddp acc hang" picks parts; LIMIT (default 560) caps each part's seconds.
out=${OUT:-$(mktemp -d)}
repo=$(pwd)
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
limit=${LIMIT:-560}
part() {  # name command...: run it in the background with its log and its wall time
  name=$1; shift
  ( s=$(date +%s); timeout "$limit" "$@" > "$out/$name.log" 2>&1; rc=$?; echo "$name rc=$rc $(( $(date +%s) - s )) s" > "$out/$name.rc" ) &
}
for p in ${PARTS:-big ddp acc hang}; do
  case $p in
    big) part big env LONG_JOB_SECONDS=${LONG_JOB_SECONDS:-20} CUDA_VISIBLE_DEVICES=0 sh bench/gpu_big_inputs.sh ;;
    ddp) part ddp env BENCH_OUT="$out/ddp" sh bench/spawn_ddp.sh ;;
    acc) part acc env CUDA_VISIBLE_DEVICES=1 sh -c "cd $out && cp $repo/tests/gpu_cases/triton_relu_wrong_job.py . &&
      python -m reprokit capture -o acc_cap -- python triton_relu_wrong_job.py; echo capture done at \$(date +%s);
      python -m reprokit bisect --from-capture acc_cap -o acc_art; echo bisect rc=\$?" ;;
    hang) part hang env CUDA_VISIBLE_DEVICES=1 sh -c "cd $out && cp $repo/tests/gpu_cases/triton_hang_job.py . &&
      date +%s && python -m reprokit capture -o hang_cap --compile-timeout 30s -- python triton_hang_job.py;
      echo capture done at \$(date +%s); python -m reprokit bisect --from-capture hang_cap -o hang_art;
      echo bisect rc=\$?; date +%s" ;;
  esac
done
wait
cat "$out"/*.rc
for f in "$out"/*.log; do echo "=== $f"; tail -40 "$f"; done
