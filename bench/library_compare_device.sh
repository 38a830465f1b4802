#!/bin/bash
# bench/library_compare.py over many cases side by side, on a machine of many cores (the device machine: 32 cores,
# torch 2.11, Python 3.12, so the newest shrinkray installs beside torch). Run by hand through the device tool,
# with the wheels of pysource-minimize, shrinkray and their needs carried in .whl/ (bench/README.md says which):
#   bash bench/library_compare_device.sh SHARE CASE...
# Each case is isolated once (--jobs 2), then each engine runs as its own process, one candidate at a time
# (--width 1: pysource-minimize and shrinkray ask one at a time), all under the same share of SHARE seconds.
# Rows (JSON lines) and each engine's repro.py land in $OUT.
set -u
share=$1; shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SHRINKRAY=/tmp/site/bin/shrinkray
python3 -c "import torch, reprokit, pysource_minimize, shrinkray.reducer; print(torch.__version__)" || exit 1
work=/tmp/libcmp; mkdir -p "$work" "$OUT/rows"
for c in "$@"; do
  python3 bench/library_compare.py --isolate-only --width 2 -o "$work" "tests/real_bugs/$c.py" > /dev/null 2>&1 &
done
wait
echo "isolated at $(date +%T)"
for c in "$@"; do
  for e in reprokit pysource_minimize shrinkray; do
    (python3 bench/library_compare.py --reuse --engines $e --width 1 --share "$share" -o "$work" "tests/real_bugs/$c.py" \
      2> "$OUT/rows/$c.$e.err" | head -1 > "$OUT/rows/$c.$e.json") &
  done
done
wait
echo "done at $(date +%T)"
for f in "$work"/*/*/repro.py; do
  rel=${f#$work/}; mkdir -p "$OUT/repros/$(dirname "$rel")"; cp "$f" "$OUT/repros/$rel"
done
