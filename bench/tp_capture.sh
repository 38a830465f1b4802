#!/bin/sh
# Issues #30/#31: a tensor-parallel torchrun job, three ways, on the same machine in one go:
#   one plain `torchrun` run of the job;
#   `reprokit capture -- torchrun ...`, then `reprokit bisect --from-capture` on ONE device (CUDA_VISIBLE_DEVICES);
#   `reprokit bisect --nproc-per-node N` in place (every whole-job trial a torchrun of N ranks).
# Then `reprokit plan` on each run's journal for K = 1, 2, 4, 8 nodes.
# Usage, from the repository root:
#   sh bench/tp_capture.sh tests/capture_cases/tp_allreduce_job.py 2                   (CPU, gloo)
#   RELU_BUG=compile_error sh bench/tp_capture.sh tests/gpu_cases/tp_nccl_relu.py 2     (two GPUs, NCCL)
# BENCH_OUT=DIR keeps the run folders and the table there.
set -e
case=$1
n=${2:-2}
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
repo=$(pwd)
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
cp "$case" "$out/"
job=$(basename "$case")
cd "$out"
now() { python -c "import time; print(time.time())"; }
since() { python -c "import time; print(round(time.time() - $1, 1))"; }

t=$(now); torchrun --standalone --nproc-per-node "$n" "$job" > plain.txt 2>&1 || true; plain=$(since "$t")
t=$(now)
python -m reprokit capture --output-dir "$out/cap" -- torchrun --standalone --nproc-per-node "$n" "$job" \
  > capture.txt 2>&1 || true
captured=$(since "$t")
one=$(python -c "import os; print((os.environ.get('CUDA_VISIBLE_DEVICES') or '0').split(',')[0])")
t=$(now)
CUDA_VISIBLE_DEVICES=$one python -m reprokit bisect --from-capture "$out/cap" --json -o "$out/art-cap" \
  > from_capture.json 2> from_capture.err || true
offline=$(since "$t")
t=$(now)
python -m reprokit bisect "$job" --nproc-per-node "$n" --json -o "$out/art" > in_place.json 2> in_place.err || true
inplace=$(since "$t")
python - "$plain" "$captured" "$offline" "$inplace" "$job" "$n" <<'PY' | tee table.md
import json, os, subprocess, sys

plain, captured, offline, inplace = map(float, sys.argv[1:5])
job, n = sys.argv[5], sys.argv[6]
print(f"one plain run of `torchrun --nproc-per-node {n} {job}`: {plain:.1f} s")
print(f"`reprokit capture -- torchrun ...`: {captured:.1f} s ({captured - plain:+.1f} s against the plain run)")
print()
print("| path | command s | verdict s | verified repro s | trials | runs of the job | stage | lowering | repro |")
print("|---|---|---|---|---|---|---|---|---|")
plans = []
for label, name, wall in (("capture, then bisect --from-capture on one device", "from_capture", offline),
                          (f"bisect --nproc-per-node {n} in place", "in_place", inplace)):
    try:
        v = json.load(open(name + ".json"))
    except ValueError:
        err = open(name + ".err").read().strip().splitlines() or ["(nothing)"]
        print(f"| {label} | {wall:.0f} | failed: {err[-1][:120]} |")
        continue
    journal = [json.loads(line) for line in open(os.path.join(v["run_dir"], "journal.jsonl"))]
    runs = sum(1 for r in journal if r["kind"] == "script" and os.path.basename(r["spec"]["script"]) == job)
    repro = v["seconds"] + (v.get("minify_seconds") or 0) - (v.get("test_repro_seconds") or 0)
    sub = v.get("subsystem") or {}
    nodes = v.get("nodes") or {}
    print(f"| {label} | {wall:.0f} | {v['seconds']:.0f} | {repro:.0f}{'' if v.get('repro_verified') else ' (unverified)'}"
          f" | {len(journal)} | {runs} | {v.get('failing_stage')} | {(sub.get('detail') or '-').split(' (')[0][:40]} "
          f"| {v.get('repro_kind')} {nodes.get('original')}->{nodes.get('minified')} |")
    p = subprocess.run([sys.executable, "-m", "reprokit", "plan", v["run_dir"], "--nodes", "1,2,4,8", "--json"],
                       capture_output=True, text=True)
    if p.returncode == 0:
        plans.append((label, json.loads(p.stdout)))
print()
print("`reprokit plan RUN_DIR --nodes 1,2,4,8` (each round's trials packed longest-first onto K nodes):")
print()
print("| run | trials | rounds | node-hours spent | K=1 s | K=2 s | K=4 s | K=8 s |")
print("|---|---|---|---|---|---|---|---|")
for label, p in plans:
    cells = " | ".join(f"{x['seconds']:.0f}" for x in p["plans"])
    print(f"| {label} | {p['trials']} | {p['rounds']} | {p['node_hours']:.4f} | {cells} |")
PY
echo "run folders under $out"
