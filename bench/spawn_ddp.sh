#!/bin/sh
# Issue 48 item 3: a DDP job that spawns its own ranks (tests/gpu_cases/ddp_spawn_relu.py: mp.spawn, NCCL on two
# GPUs, gloo on CPU where there are none), three ways on the same machine in one go:
#   one plain run of the job;
#   `reprokit capture -- python JOB` (one folder per rank: rank0/, rank1/), then `reprokit bisect --from-capture`
#   on ONE device (CUDA_VISIBLE_DEVICES);
#   `reprokit bisect JOB` in place (every whole-job trial spawns both ranks), which should verify a repro in 10 min.
# Usage, from the repository root:  sh bench/spawn_ddp.sh            (RELU_BUG=runtime_error|accuracy to vary it)
# BENCH_OUT=DIR keeps the run folders and the table there. Exit 0 when every check below held.
set -e
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
repo=$(pwd)
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
job=ddp_spawn_relu.py
cp "tests/gpu_cases/$job" "$out/"
cd "$out"
now() { python -c "import time; print(time.time())"; }
since() { python -c "import time; print(round(time.time() - $1, 1))"; }

t=$(now); python "$job" > plain.txt 2>&1 || true; plain=$(since "$t")
t=$(now); python -m reprokit capture --output-dir "$out/cap" -- python "$job" > capture.txt 2>&1 || true
captured=$(since "$t")
one=$(python -c "import os; print((os.environ.get('CUDA_VISIBLE_DEVICES') or '0').split(',')[0])")
t=$(now)
CUDA_VISIBLE_DEVICES=$one python -m reprokit bisect --from-capture "$out/cap" --json --no-pack -o "$out/art-cap" \
  > from_capture.json 2> from_capture.err || true
offline=$(since "$t")
t=$(now)
python -m reprokit bisect "$job" --json --no-pack -o "$out/art" > in_place.json 2> in_place.err || true
inplace=$(since "$t")
set +e
python - "$plain" "$captured" "$offline" "$inplace" "$job" > table.md <<'PY'
import json, os, sys

plain, captured, offline, inplace = map(float, sys.argv[1:5])
job = sys.argv[5]
checks = []  # printed after the table


def check(what, held):
    checks.append((what, bool(held)))


print(f"one plain run of `python {job}`: {plain:.1f} s; `reprokit capture -- python {job}`: {captured:.1f} s")
ranks = sorted(d for d in os.listdir("cap") if d.startswith("rank")) if os.path.isdir("cap") else []
failures = {d: json.load(open(f"cap/{d}/failure.json")) for d in ranks if os.path.exists(f"cap/{d}/failure.json")}
check(f"capture: one folder per rank with its failure.json ({', '.join(failures) or 'none'})",
      sorted(failures) == ["rank0", "rank1"])
check("capture: each failure.json names its own rank of the group",
      all(str(f["process_group"]["rank"]) == d[4:] == f["rank"] for d, f in failures.items()))
print()
print("| path | command s | verdict s | trials | runs of the job | stage | graph | lowering | repro |")
print("|---|---|---|---|---|---|---|---|---|")
for label, name, wall in (("capture, then bisect --from-capture on one device", "from_capture", offline),
                          ("bisect in place", "in_place", inplace)):
    try:
        v = json.load(open(name + ".json"))
    except ValueError:
        err = open(name + ".err").read().strip().splitlines() or ["(nothing)"]
        print(f"| {label} | {wall:.0f} | failed: {err[-1][:160]} |")
        check(f"{label}: a verdict", False)
        continue
    journal = [json.loads(line) for line in open(os.path.join(v["run_dir"], "journal.jsonl"))]
    runs = sum(1 for r in journal if r["kind"] == "script" and os.path.basename(r["spec"]["script"]) == job)
    sub = v.get("subsystem") or {}
    nodes = v.get("nodes") or {}
    print(f"| {label} | {wall:.0f} | {v['seconds']:.0f} | {len(journal)} | {runs} | {v.get('failing_stage')} "
          f"| {v.get('graph')} | {(sub.get('detail') or '-').split(' (')[0][:40]} "
          f"| {v.get('repro_kind')} {nodes.get('original')}->{nodes.get('minified')}"
          f"{'' if v.get('repro_verified') else ' (unverified)'} |")
    check(f"{label}: inductor, graph 1, aten.relu", v.get("failing_stage") == "inductor" and v.get("graph") == 1
          and "aten.relu" in (sub.get("detail") or ""))
    check(f"{label}: a verified repro of the graph (not the script cut)",
          v.get("repro_verified") is True and v.get("repro_kind") in ("graph", "graph_in_context"))
    if name == "in_place":
        check(f"in place: within 10 minutes ({wall:.0f} s)", wall <= 600)
print()
for what, held in checks:
    print(f"- [{'x' if held else ' '}] {what}")
sys.exit(0 if all(held for _, held in checks) else 1)
PY
held=$?
cat table.md
echo "run folders under $out"
exit $held
