#!/bin/sh
# The capture's overhead on a passing job: a plain run, `reprokit capture -- python JOB`, REPROKIT_CAPTURE=DIR and
# `reprokit capture --check-accuracy -- python JOB` (each graph's first 2 calls also run eagerly) alternated, each
# with a cold compile cache; wall seconds and CPU seconds (user+sys, children included: steadier than wall time on
# a shared machine). Run from the repository root: sh bench/capture_overhead.sh [ROUNDS]
rounds=${1:-3}
job=bench/capture_overhead_job.py
hook=$(python -c "from reprokit.child.ranks import HOOK_DIR; print(HOOK_DIR)")
timed() {  # label, then the command
  label=$1; shift
  cache=$(mktemp -d); out=$(mktemp -d)
  TORCHINDUCTOR_CACHE_DIR=$cache OUT=$out /usr/bin/time -f "$label wall %e cpu %U+%S" "$@" >/dev/null 2>/tmp/capture_overhead.$$
  tail -1 /tmp/capture_overhead.$$ | tr '\n' ' '; echo "($(ls "$out" | tr '\n' ' '))"
  rm -rf "$cache" "$out" /tmp/capture_overhead.$$
}
for i in $(seq "$rounds"); do
  timed plain sh -c "python $job"
  timed capture sh -c "python -m reprokit.cli capture --output-dir \$OUT -- python $job"
  timed env sh -c "REPROKIT_CAPTURE=\$OUT PYTHONPATH=$hook:\$PYTHONPATH python $job"
  timed check sh -c "python -m reprokit.cli capture --check-accuracy --output-dir \$OUT -- python $job"
done
