#!/bin/bash
# The quick start under one Python, two checkouts of reprokit alternately, twice each:
#   bench/quickstart_ab.sh PYTHON OLD_CHECKOUT NEW_CHECKOUT [OUT]
# (stop 43: PYTHON the torch 2.15 environment, OLD a clone at 768dc7b, NEW this checkout). One line per run in
# OUT/summary.txt: the whole run's seconds and the verdict's.
set -euo pipefail
PY=$1; OLD=$2; NEW=$3; OUT=${4:-/tmp/quickstart-ab}
HERE=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
for round in 1 2; do
  for v in old new; do
    src=$OLD; [ "$v" = new ] && src=$NEW
    d="$OUT/$v-$round"; rm -rf "$d"; mkdir -p "$d"; cp "$HERE/examples/relu_bug.py" "$d/"
    s=$(date +%s.%N)
    (cd "$d" && PYTHONPATH="$src" "$PY" -m reprokit bisect relu_bug.py -o art > out.txt 2>&1) || true
    e=$(date +%s.%N)
    echo "$v round $round: $(python3 -c "print(round($e - $s, 1))") s; $(grep 'verdict after' "$d/out.txt")" \
      | tee -a "$OUT/summary.txt"
  done
done
