#!/bin/sh
# Issues #30 and #46's benchmark: a job whose plain run takes LONG_JOB_SECONDS (default 60) before a late failure,
# bisected with default flags, and captured then bisected from the capture. Prints one plain run's time, then for
# each path the time to the verdict and to a verified repro.py (each also as a multiple of the plain run) and the
# runs of the whole script. Run from the repository root:
#   sh bench/long_job.sh                            the evaluation's kernel fails to compile (raises)
#   sh bench/long_job.sh bench/long_job_wrong.py    the evaluation is silently wrong; the job's own check exits 1
# LONG_JOB_PATHS=inplace runs the in-place bisect alone (no capture).
set -e
script=${1:-bench/long_job.py}
name=$(basename "$script")
out=$(mktemp -d)
cp "$script" "$out/"
cd "$out"
start=$(date +%s.%N)
python "$name" > plain.txt 2>&1 || true
plain=$(python -c "import time; print(round(time.time() - $start, 1))")
python -m reprokit bisect "$name" --json -o "$out/art" > bisect.json 2> bisect.err || true
if [ "${LONG_JOB_PATHS:-all}" = all ]; then
  python -m reprokit capture --output-dir "$out/cap" -- python "$name" > /dev/null 2>&1 || true
  python -m reprokit bisect --from-capture "$out/cap" --json -o "$out/art-cap" > capture.json 2> capture.err || true
fi
python - "$plain" <<'PY'
import json, os, sys

plain = float(sys.argv[1])
print(f"one plain run: {plain:.1f} s (fails at the end: {open('plain.txt').read().strip().splitlines()[-1][:80]})")
print("| path | verdict s | x plain | verified repro s | x plain | runs of the script | targets met |")
print("|---|---|---|---|---|---|---|")
for label, name in (("bisect (default flags)", "bisect.json"), ("capture, then bisect --from-capture", "capture.json")):
    if not os.path.exists(name):
        continue
    try:
        v = json.load(open(name))
    except ValueError:
        print(f"| {label} | failed: {open(name.replace('.json', '.err')).read().strip().splitlines()[-1][:100]} |")
        continue
    journal = [json.loads(line) for line in open(os.path.join(v["run_dir"], "journal.jsonl"))]
    runs = sum(1 for r in journal if r["kind"] == "script" and os.path.basename(r["spec"]["script"]) != "repro.py")
    verdict = v["seconds"]
    repro = v["seconds"] + v["minify_seconds"] - (v.get("test_repro_seconds") or 0)
    met = verdict <= 1.5 * plain + 60 and repro <= 2 * plain + 90 and runs <= 3 and v["repro_verified"]
    print(f"| {label} | {verdict:.0f} | {verdict / plain:.2f} | {repro:.0f}{'' if v['repro_verified'] else ' (unverified)'}"
          f" | {repro / plain:.2f} | {runs} | {'yes' if met else 'no'} |")
    sub = v.get("subsystem") or {}
    print(f"  {label}: stage {v.get('failing_stage')}, graph {v.get('graph')}, {sub.get('name')} #{sub.get('application')}"
          f" {(sub.get('detail') or '').split(' ')[0]}, repro {v.get('repro_kind')} {v.get('nodes')}, trials {v.get('trials')}+{v.get('minify_trials')}")
PY
echo "run folders under $out"
