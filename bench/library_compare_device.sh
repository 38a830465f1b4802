#!/bin/bash
# bench/library_compare.py over many cases side by side, on a machine of many cores (the device machine: 32 cores,
# torch 2.11, Python 3.12, so the newest shrinkray installs beside torch). Run by hand through the device tool,
# with the wheels of pysource-minimize, shrinkray and their needs carried in .whl/ (bench/README.md says which):
#   bash bench/library_compare_device.sh SHARE CASE...            (PHASE=isolate, then PHASE=engines: two calls)
# Each case is isolated once (--jobs 2), then each engine runs as its own process, one candidate at a time
# (--width 1: pysource-minimize and shrinkray ask one at a time), all under the same share of SHARE seconds.
# $OUT gets three files (the device tool brings back few): log.txt, rows.jsonl and repros.tar.gz.
set -u
share=$1; shift
log="$OUT/log.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SHRINKRAY=/tmp/site/bin/shrinkray
python3 -c "import torch, reprokit, pysource_minimize, shrinkray.reducer; print(torch.__version__)" >> "$log" 2>&1 || exit 1
work=/tmp/libcmp rows=/tmp/libcmp-rows
echo "start $(date +%T), $(nproc) cores, $# cases" >> "$log"
# PHASE=isolate, then PHASE=engines in the next call (within the 30 s a machine stays warm, which keeps /tmp): the
# two together overrun one call's 10 minutes where the cases are inductor ones. Unset: both in this call.
if [ "${PHASE:-}" != engines ]; then
  rm -rf "$work" "$rows"; mkdir -p "$work" "$rows"
  for c in "$@"; do
    timeout "${ISOLATE_LIMIT:-200}" python3 bench/library_compare.py --isolate-only --width 2 -o "$work" "tests/real_bugs/$c.py" > /dev/null 2>&1 &
  done
  wait
  echo "isolated at $(date +%T): $(ls "$work" | wc -l) cases" >> "$log"
  [ "${PHASE:-}" = isolate ] && exit 0
fi
for c in "$@"; do
  for e in reprokit pysource_minimize shrinkray; do
    (timeout $((share + ${SLACK:-150})) python3 bench/library_compare.py --reuse --engines $e --width 1 --share "$share" -o "$work" \
      "tests/real_bugs/$c.py" 2> "$rows/$c.$e.err" | head -1 > "$rows/$c.$e.json") &
  done
done
wait
echo "done at $(date +%T)" >> "$log"
cat "$rows"/*.json > "$OUT/rows.jsonl"
for f in "$rows"/*.err; do [ -s "$f" ] && { echo "== $f"; tail -5 "$f"; } >> "$log"; done
(cd "$work" && tar czf "$OUT/repros.tar.gz" */*/repro.py)
