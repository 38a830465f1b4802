#!/bin/sh
# The capture's overhead on a passing job: plain and captured runs alternated (cold compile cache each time),
# wall seconds of each. Run from the repository root: sh bench/capture_overhead.sh [ROUNDS]
rounds=${1:-3}
job=bench/capture_overhead_job.py
for i in $(seq "$rounds"); do
  cache=$(mktemp -d)
  start=$(date +%s.%N); TORCHINDUCTOR_CACHE_DIR=$cache python "$job" >/dev/null; end=$(date +%s.%N)
  echo "plain    $(echo "$end - $start" | bc)"
  rm -rf "$cache"; cache=$(mktemp -d); out=$(mktemp -d)
  start=$(date +%s.%N)
  TORCHINDUCTOR_CACHE_DIR=$cache python -m reprokit.cli capture --output-dir "$out" -- python "$job" >/dev/null
  end=$(date +%s.%N)
  echo "captured $(echo "$end - $start" | bc)  ($(ls "$out"))"
  rm -rf "$cache" "$out"
done
