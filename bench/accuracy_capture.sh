#!/bin/sh
# Issue 46: genuine accuracy bugs of the corpus (tests/real_bugs/, class accuracy), each run once under
# `reprokit capture` (the script's own check ends it in error, no exception from torch), then bisected offline:
# `reprokit bisect --from-capture --no-pack`. Per case: the capture's wall seconds, then the verdict's stage, what
# it named, the repro (verified, nodes) or the one line of exit 3. Run from the repository root:
#   sh bench/accuracy_capture.sh [CASE.py ...]   (default: the five accuracy cases)
out=$(mktemp -d)
cases=${*:-"bmm_int8_output_dtype.py attention_softmax_nonlast_dim.py c_addmm_beta0_nan_state.py c_float_floor_div_bucketize.py erfinv_near_one_f64.py"}
for case in $cases; do
  name=${case%.py}
  t=$(date +%s.%N)
  (cd tests/real_bugs && python -m reprokit.cli capture -o "$out/$name/cap" -- python "$case" >/dev/null 2>"$out/$name.capture.txt")
  capture_s=$(python -c "import time; print(round(time.time() - $t, 1))")
  t=$(date +%s.%N)
  (cd "$out" && python -m reprokit.cli bisect --from-capture "$out/$name/cap" -o "$out/$name/art" --json --no-pack \
    >"$out/$name.json" 2>"$out/$name.bisect.txt"); code=$?
  bisect_s=$(python -c "import time; print(round(time.time() - $t, 1))")
  python - "$name" "$capture_s" "$bisect_s" "$code" "$out/$name.json" <<'PY'
import json, sys
name, cap, bis, code, path = sys.argv[1:]
try:
    v = json.load(open(path))
except ValueError:
    v = {}
sub = v.get("subsystem") or {}
named = f"{sub.get('name')} {str(sub.get('detail', ''))[:40]}" if sub else f"graph {v.get('graph')}"
repro = f"verified={v.get('repro_verified')} nodes={v.get('nodes')}" if v.get("failing_stage") else v.get("message", "")
print(f"{name}: capture {cap} s, bisect {bis} s, exit {code}: {v.get('failing_stage')}; {named}; {repro}")
PY
done
echo "folders: $out"
