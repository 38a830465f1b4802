"""reprokit against PyTorch's own tools, on the same machine in the same run (by hand, not in CI).

    python bench/compare.py [--cases relu_compile_error,relu_runtime_error] [--jobs 2] [--skip-torch]

Per case: verdict right?, wall seconds, trials, nodes before → after, repro reproduces?, and the ratios
reprokit / PyTorch, for
  - the verdict: `python -m torch._inductor.compiler_bisector run python CASE` vs `reprokit bisect --no-minify`;
  - the minimal repro: TORCHDYNAMO_REPRO_AFTER=aot + `minifier_launcher.py minify` vs reprokit's minify.
Also the per-trial overhead: a trial's wall time minus the time its child spent after `import torch` (graph and
repro trials fork from a warm worker that imported torch already; whole-script trials start a fresh interpreter),
and with --compare-jobs the same run with -j 1, for the --jobs speedup.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "cases"

COUNTER = """import os, subprocess, sys
with open(os.environ["BENCH_COUNT"], "a") as f:
    f.write("x")
sys.exit(subprocess.run([sys.executable] + sys.argv[1:]).returncode)
"""


def workdir(case: str) -> pathlib.Path:
    d = pathlib.Path(tempfile.mkdtemp(prefix="bench-"))
    shutil.copy(CASES / case, d / case)
    shutil.copy(CASES / "_blocks.py", d / "_blocks.py")
    return d


def env_for(d: pathlib.Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_BISECT", "TORCHDYNAMO_REPRO"))}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(d / "inductor-cache")  # cold, as a user's first try would be
    env["PYTHONPATH"] = str(REPO)
    return env


def case_args(case: str) -> list:
    """The arguments a case asks for on its EXPECT line (--check-accuracy, --timeout ...)."""
    import ast

    first = (CASES / case).read_text().splitlines()[0]
    exp = ast.literal_eval(first.split("=", 1)[1]) if first.startswith("# EXPECT") else {}
    return list(exp.get("args", [])) + (["--timeout", str(exp["timeout"]), "--no-minify"] if "timeout" in exp else [])


def run_reprokit(case: str, jobs: int) -> dict:
    d = workdir(case)
    env = env_for(d)
    env["FLAKY_DIR"] = str(d)
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "reprokit", "bisect", case, "--json", "--no-pack", "--no-configs",
                        "-j", str(jobs), "-o", str(d / "artifacts"), *case_args(case)], cwd=d, capture_output=True,
                       text=True, env=env)
    wall = time.monotonic() - t
    data = json.loads(p.stdout) if p.stdout.strip() else {}
    overheads: dict = {"graph": [], "script": []}
    for line in pathlib.Path(data.get("run_dir", d), "journal.jsonl").read_text().splitlines() if data else []:
        entry = json.loads(line)
        res = pathlib.Path(entry["outcome"]["trial_dir"], "result.json")
        if res.exists():
            r = json.loads(res.read_text())
            if r.get("import_seconds") is not None:
                inside = r["seconds"] - r["import_seconds"]
                kind = "graph" if entry["spec"]["mode"] in ("graph", "repro") else "script"
                overheads[kind].append(entry["outcome"]["seconds"] - inside)
    mean = {k: (sum(v) / len(v) if v else None) for k, v in overheads.items()}
    return {"data": data, "wall": wall, "overhead": mean["graph"], "overhead_script": mean["script"],
            "verdict_ok": data.get("failing_stage") == "inductor" and "relu" in str(data.get("subsystem")),
            "dir": d}


def run_bisector(case: str) -> dict:
    d = workdir(case)
    (d / "count.py").write_text(COUNTER)
    env = env_for(d)
    env["BENCH_COUNT"] = str(d / "runs")
    t = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "torch._inductor.compiler_bisector", "run", sys.executable,
                        str(d / "count.py"), case], cwd=d, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.monotonic() - t
    runs = len((d / "runs").read_text()) if (d / "runs").exists() else 0
    m = re.search(r"Bisection complete: (.*)", p.stdout)
    result = m.group(1) if m else p.stdout[-300:]
    return {"wall": wall, "runs": runs, "result": result,
            "verdict_ok": "inductor" in result and "lowerings" in result and "relu" in result}


def count_forward_nodes(repro: str) -> int | None:
    """FX nodes of the Repro module in a minifier repro: placeholders + assignments + output."""
    m = re.search(r"class Repro\(torch\.nn\.Module\):.*?def forward\(self(?P<args>[^)]*)\):(?P<body>.*?)\n\S",
                  repro, re.S)
    if not m:
        return None
    args = [a for a in m.group("args").split(",") if a.strip()]
    assigns = [line for line in m.group("body").splitlines() if re.match(r"\s+\w+ = ", line)]
    return len(args) + len(assigns) + 1


def run_after_aot(case: str) -> dict:
    d = workdir(case)
    env = env_for(d)
    env["TORCHDYNAMO_REPRO_AFTER"] = "aot"
    t = time.monotonic()
    subprocess.run([sys.executable, case], cwd=d, capture_output=True, text=True, env=env, timeout=1800)
    launchers = sorted(d.rglob("minifier_launcher.py"))
    if not launchers:
        return {"wall": time.monotonic() - t, "nodes": None, "reproduces": False, "note": "no launcher written"}
    launcher = launchers[-1]
    env.pop("TORCHDYNAMO_REPRO_AFTER")
    p = subprocess.run([sys.executable, str(launcher), "minify"], cwd=launcher.parent, capture_output=True,
                       text=True, env=env, timeout=3600)
    wall = time.monotonic() - t
    repros = sorted(d.rglob("repro.py"), key=lambda x: x.stat().st_mtime)
    nodes = count_forward_nodes(repros[-1].read_text()) if repros else None
    reproduces = False
    if repros:
        r = subprocess.run([sys.executable, str(repros[-1])], cwd=repros[-1].parent, capture_output=True, text=True,
                           env=env, timeout=900)
        reproduces = r.returncode != 0
    queries = len(re.findall(r"Trying granularity|Made progress|Started off with", p.stdout + p.stderr))
    return {"wall": wall, "nodes": nodes, "reproduces": reproduces, "queries": queries}


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="relu_compile_error.py")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-torch", action="store_true", help="reprokit only (no PyTorch tools)")
    ap.add_argument("--compare-jobs", action="store_true", help="also run reprokit with -j 1")
    args = ap.parse_args()
    rows = []
    for case in args.cases.split(","):
        case = case if case.endswith(".py") else case + ".py"
        ours = run_reprokit(case, args.jobs)
        v = ours["data"]
        verdict_s = v.get("seconds", 0.0)
        minify_s = v.get("minify_seconds", 0.0)
        row = {"case": case, "stage": v.get("failing_stage"), "kind": v.get("kind"), "graph": v.get("graph"),
               "subsystem": (v.get("subsystem") or {}).get("detail"), "flaky": v.get("flaky"),
               "ours_verdict_ok": ours["verdict_ok"], "ours_verdict_s": verdict_s,
               "ours_trials": v.get("trials"), "ours_minify_s": minify_s, "ours_minify_trials": v.get("minify_trials"),
               "ours_nodes": v.get("nodes"), "ours_verified": v.get("repro_verified"), "overhead_s": ours["overhead"],
               "overhead_script_s": ours["overhead_script"], "ours_wall": ours["wall"]}
        if args.compare_jobs:
            one = run_reprokit(case, 1)
            row.update({"jobs1_wall": one["wall"], "jobs1_verdict_s": one["data"].get("seconds"),
                        "jobs1_minify_s": one["data"].get("minify_seconds")})
        if not args.skip_torch:
            b = run_bisector(case)
            a = run_after_aot(case)
            row.update({"torch_verdict_ok": b["verdict_ok"], "torch_verdict_s": b["wall"], "torch_runs": b["runs"],
                        "torch_result": b["result"], "torch_minify_s": a["wall"], "torch_nodes": a["nodes"],
                        "torch_reproduces": a["reproduces"], "torch_minify_note": a.get("note", "")})
        rows.append(row)
        print(json.dumps(row, default=str), flush=True)
    print()
    if args.skip_torch:
        print(f"{'case':<28} {'stage':<30} {'kind':<10} {'graph':>5} {'trials':>6} {'verdict s':>9} "
              f"{'nodes':>9} {'minify':>7} {'minify s':>8} {'repro':>6}")
        for r in rows:
            n = r["ours_nodes"] or {}
            nodes = f"{n.get('original')}→{n.get('minified')}" + ("L" if n.get("unit") == "lines" else "") if n else "-"
            print(f"{r['case']:<28} {str(r['stage']):<30} {str(r['kind']):<10} {str(r['graph']):>5} "
                  f"{str(r['ours_trials']):>6} {r['ours_verdict_s']:>9.1f} {nodes:>9} {str(r['ours_minify_trials']):>7} "
                  f"{r['ours_minify_s'] or 0:>8.1f} {str(r['ours_verified']):>6}")
        return
    head = f"{'case':<24} {'who':<9} {'verdict?':<8} {'seconds':>8} {'runs':>5} {'minify s':>9} {'nodes':>10} {'repro?':>6}"
    print(head)
    for r in rows:
        n = r["ours_nodes"] or {}
        ov = f"{r['overhead_s']:.2f}" if r["overhead_s"] is not None else "-"
        ovs = f"{r['overhead_script_s']:.2f}" if r.get("overhead_script_s") is not None else "-"
        print(f"{r['case']:<24} {'reprokit':<9} {str(r['ours_verdict_ok']):<8} {r['ours_verdict_s']:>8.1f} "
              f"{r['ours_trials']!s:>5} {r['ours_minify_s']:>9.1f} {str(n.get('original')) + '→' + str(n.get('minified')):>10} "
              f"{str(r['ours_verified']):>6}   per-trial overhead: graph/repro {ov} s, whole script {ovs} s")
        if "jobs1_wall" in r:
            print(f"{'':<24} -j 1: {r['jobs1_wall']:.1f} s wall vs -j {args.jobs}: {r['ours_wall']:.1f} s "
                  f"({r['jobs1_wall'] / r['ours_wall']:.2f}x; target >= 1.6)")
        if "torch_verdict_s" in r:
            print(f"{'':<24} {'pytorch':<9} {str(r['torch_verdict_ok']):<8} {r['torch_verdict_s']:>8.1f} "
                  f"{r['torch_runs']:>5} {r['torch_minify_s']:>9.1f} {'?→' + str(r['torch_nodes']):>10} "
                  f"{str(r['torch_reproduces']):>6}")
            print(f"{'':<24} {'ratio':<9} {'':<8} {ratio(r['ours_verdict_s'], r['torch_verdict_s']):>8} {'':>5} "
                  f"{ratio(r['ours_minify_s'], r['torch_minify_s']):>9}   (targets: ≤ 0.20 each)")
            print(f"{'':<24} bisector said: {r['torch_result'][:150]}")


if __name__ == "__main__":
    main()
