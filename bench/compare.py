"""reprokit against PyTorch's own tools, on the same machine in the same run (by hand, not in CI).

    python bench/compare.py [--cases relu_compile_error,cnn_runtime_error] [--jobs 2] [--skip-torch] [--no-warm]

reprokit runs exactly as the README tells users to: `reprokit bisect CASE` (default flags: config flips,
subsystems, minify and pack all on), plus the arguments a case's EXPECT line asks for (--check-accuracy for a
silent mismatch). Per case, one run each of:
  - reprokit, cold: an empty compile cache (REPROKIT_CACHE_DIR set to a fresh folder), as on a new machine;
  - reprokit, warm (a labelled extra row; --no-warm skips it): the same again with the cache the cold run left;
  - `python -m torch._inductor.compiler_bisector run python CASE` (fresh TORCHINDUCTOR_CACHE_DIR) for the verdict;
  - TORCHDYNAMO_REPRO_AFTER=aot + `minifier_launcher.py minify` for the minimal repro (TORCHDYNAMO_REPRO_LEVEL
    as REPRO_LEVEL says: 3 for a crash, 4 for a wrong result, else the default 2).
It prints the verdict's time (from the command's start to verdict.json, seen from outside, as the bisector's
wall time is), trials and right-or-wrong, time to a verified repro.py (then, apart, the run of
test_repro.py that follows it: "+test s"), nodes, the split of trials
and trial-seconds per phase (start, ladder, graph, configs, subsystems, logs, minify, after repro), and the ratios against
PyTorch's tools (cold rows only). --extra "--no-configs" adds another labelled reprokit row.
A case may also be a genuine bug of tests/real_bugs (e.g. --cases autocast_disabled_region_backward): its EXPECT
line says what the verdict must name, the after_aot minifier runs at level 4 (the script dies of its own check),
and the table says which kind of repro reprokit made (graph, graph_in_context, graph_in_script, source).
"""

from __future__ import annotations

import argparse
import ast
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
# tests/real_bugs: genuine upstream bugs whose repro may come from context replay, the running script or source
# reduction (their EXPECT line says the stage and, where the verdict should name it, the op).
CASE_DIRS = (REPO / "tests" / "cases", REPO / "bench" / "cases", REPO / "tests" / "real_bugs")
DEFAULT_CASES = "relu_compile_error,cnn_runtime_error,relu_accuracy,backward_only,third_graph,wrong_decomposition"
# What the verdict must name, per case: (failing stage, a word of the subsystem detail or None).
RIGHT = {"wrong_decomposition": ("aot_eager_decomp_partition", "hardswish"), "graph_break_fullgraph": ("eager", None)}
# The after_aot minifier's TORCHDYNAMO_REPRO_LEVEL a user who read its docs would pick: 2 (the default) only sees
# exceptions raised inside compiled code; a failure that kills the process needs 3 ("good for segfaults"), a wrong
# result the script's own check catches needs 4 (accuracy).
REPRO_LEVEL = {"relu_accuracy": 4, "cnn_runtime_error": 3, "wrong_decomposition": 4}


def expect_line(case: str) -> dict:
    """The case's # EXPECT = {...} line, or {}."""
    first = case_path(case).read_text().splitlines()[0]
    return ast.literal_eval(first.split("=", 1)[1]) if first.startswith("# EXPECT") else {}


def right_answer(case: str) -> tuple:
    """(failing stage, a word the culprit must hold or None): RIGHT's, else a genuine bug's EXPECT line."""
    if case[:-3] in RIGHT:
        return RIGHT[case[:-3]]
    exp = expect_line(case)
    if "issue" in exp:  # tests/real_bugs: the stage, and the op where the verdict should name one
        return exp["failing_stage"], exp.get("op")
    return "inductor", "relu"


def repro_level(case: str) -> int:
    """A genuine bug's script dies of its own check (a wrong result: level 4), as the accuracy cases do."""
    return REPRO_LEVEL.get(case[:-3], 4 if "issue" in expect_line(case) else 2)


COUNTER = """import os, subprocess, sys
with open(os.environ["BENCH_COUNT"], "a") as f:
    f.write("x")
sys.exit(subprocess.run([sys.executable] + sys.argv[1:]).returncode)
"""


def case_path(case: str) -> pathlib.Path:
    return next(d / case for d in CASE_DIRS if (d / case).exists())


def workdir(case: str) -> pathlib.Path:
    d = pathlib.Path(tempfile.mkdtemp(prefix="bench-"))
    shutil.copy(case_path(case), d / case)
    shutil.copy(CASE_DIRS[0] / "_blocks.py", d / "_blocks.py")  # the planted cases' shared blocks
    return d


def env_for(d: pathlib.Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_BISECT", "TORCHDYNAMO_REPRO"))}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(d / "inductor-cache")  # cold, as a user's first try would be
    # The repo first; a PYTHONPATH already set (e.g. wheels installed beside torch on the device) stays behind it.
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [x for x in [os.environ.get("PYTHONPATH")] if x])
    return env


def case_args(case: str) -> list:
    """The arguments a case asks for on its EXPECT line (--check-accuracy, --timeout ...)."""
    exp = expect_line(case)
    return list(exp.get("args", [])) + (["--timeout", str(exp["timeout"])] if "timeout" in exp else [])


def phase_of(label: str) -> str:
    """The bisect phase a trial label belongs to (minify trials are counted apart, from the verdict)."""
    if label.startswith(("baseline", "original")):
        return "start"
    if label.startswith("stage-"):
        return "ladder"
    for prefix, phase in (("graph-", "graph"), ("config-", "configs"), ("torch-logs", "logs")):
        if label.startswith(prefix):
            return phase
    if re.search(r"-(off|max-?\d+)$", label):
        return "subsystems"
    return "other"


def phases(run_dir: str, verdict_trials: int) -> dict:
    """phase -> [trials, trial-seconds] over the journal's bisect trials, then minify's and after the repro's."""
    out: dict = {}
    lines = pathlib.Path(run_dir, "journal.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        entry = json.loads(line)
        label = entry.get("label") or ""
        phase = phase_of(label)
        if i >= verdict_trials:
            # After the verdict: minify's trials, then what bisect asks after the repro (Bisector.after_repro:
            # the boundary's re-run, config flips, torch logs), which delays neither verdict nor repro.
            phase = "after repro" if phase in ("configs", "subsystems", "logs") else "minify"
        row = out.setdefault(phase, [0, 0.0])
        row[0] += 1
        row[1] += entry["outcome"]["seconds"]
    return out


def run_reprokit(case: str, jobs: int, cache: pathlib.Path, extra: tuple = ()) -> dict:
    """One `reprokit bisect CASE` as the README says, with the compile cache in `cache`."""
    d = workdir(case)
    env = env_for(d)
    env["FLAKY_DIR"] = str(d)
    env["REPROKIT_CACHE_DIR"] = str(cache)
    t = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reprokit",
                "bisect",
                case,
                "--json",
                "-j",
                str(jobs),
                "-o",
                str(d / "artifacts"),
                *case_args(case),
                *extra,
            ],
            cwd=d,
            stdout=out,
            stderr=err,
            text=True,
            env=env,
        )
        # The verdict's time as the bisector's is taken: from the command's start (interpreter and imports
        # included) to the moment verdict.json first exists, seen from outside.
        verdict_wall = None
        while p.poll() is None:
            if verdict_wall is None and any((d / "artifacts").glob("*/verdict.json")):
                verdict_wall = time.monotonic() - t
            time.sleep(0.02)
        wall = time.monotonic() - t
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    data = json.loads(stdout) if stdout.strip() else {}
    if data:
        data["verdict_wall"] = round(verdict_wall or wall, 2)
    stage, word = right_answer(case)
    ok = data.get("failing_stage") == stage and (word is None or word in json.dumps(data.get("subsystem")))
    split = phases(data["run_dir"], data.get("trials") or 0) if data.get("run_dir") else {}
    return {"data": data, "wall": wall, "verdict_ok": ok, "phases": split, "error": stderr[-300:]}


def run_bisector(case: str) -> dict:
    d = workdir(case)
    (d / "count.py").write_text(COUNTER)
    env = env_for(d)
    env["BENCH_COUNT"] = str(d / "runs")
    t = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "torch._inductor.compiler_bisector", "run", sys.executable, str(d / "count.py"), case],
        cwd=d,
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    wall = time.monotonic() - t
    runs = len((d / "runs").read_text()) if (d / "runs").exists() else 0
    m = re.search(r"Bisection complete: (.*)", p.stdout)
    result = m.group(1) if m else p.stdout[-300:]
    stage, word = right_answer(case)
    return {
        "wall": wall,
        "runs": runs,
        "result": result,
        # backend='eager' is not backend='aot_eager': the stage is matched as the value it is
        "verdict_ok": re.search(rf"backend=['\"]?{stage}\b", result) is not None and (word is None or word in result),
    }


def count_forward_nodes(repro: str) -> int | None:
    """FX nodes of the Repro module in a minifier repro: placeholders + assignments + output."""
    m = re.search(
        r"class Repro\(torch\.nn\.Module\):.*?def forward\(self(?P<args>[^)]*)\):(?P<body>.*?)\n\S", repro, re.S
    )
    if not m:
        return None
    args = [a for a in m.group("args").split(",") if a.strip()]
    assigns = [line for line in m.group("body").splitlines() if re.match(r"\s+\w+ = ", line)]
    return len(args) + len(assigns) + 1


def run_after_aot(case: str) -> dict:
    d = workdir(case)
    env = env_for(d)
    env["TORCHDYNAMO_REPRO_AFTER"] = "aot"
    env["TORCHDYNAMO_REPRO_LEVEL"] = str(repro_level(case))
    t = time.monotonic()
    subprocess.run([sys.executable, case], cwd=d, capture_output=True, text=True, env=env, timeout=1800)
    launchers = sorted(d.rglob("minifier_launcher.py"))
    if not launchers:
        return {
            "wall": time.monotonic() - t,
            "nodes": None,
            "reproduces": False,
            "note": f"no launcher written (level {env['TORCHDYNAMO_REPRO_LEVEL']})",
        }
    launcher = launchers[-1]
    env.pop("TORCHDYNAMO_REPRO_AFTER")
    env.pop("TORCHDYNAMO_REPRO_LEVEL")
    p = subprocess.run(
        [sys.executable, str(launcher), "minify"],
        cwd=launcher.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    wall = time.monotonic() - t
    repros = sorted(d.rglob("repro.py"), key=lambda x: x.stat().st_mtime)
    nodes = count_forward_nodes(repros[-1].read_text()) if repros else None
    reproduces, note = False, f"level {repro_level(case)}"
    if repros:
        r = subprocess.run(
            [sys.executable, str(repros[-1])],
            cwd=repros[-1].parent,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )
        unresolved = cannot_load(r.stderr)
        reproduces = r.returncode != 0 and not unresolved
        if unresolved:
            note += f"; its repro.py dies of {unresolved}, not of the bug"
    queries = len(re.findall(r"Trying granularity|Made progress|Started off with", p.stdout + p.stderr))
    return {"wall": wall, "nodes": nodes, "reproduces": reproduces, "queries": queries, "note": note}


def cannot_load(stderr: str):
    """The line a minifier repro died of when it could not even build its graph: an op of the script's that it
    never registered (the script's custom op), a module it cannot import. None when it died of something else."""
    m = re.search(
        r"^.*('_OpNamespace' '[\w.]+' object has no attribute '[\w.]+'|failed to resolve torch\.ops\.[\w.]+|"
        r"No module named '[\w.]+').*$",
        stderr,
        re.M,
    )
    return m.group(0).strip()[:160] if m else None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "-"


def test_repro_seconds(v: dict) -> float:
    """How long the run of test_repro.py (written after repro.py is verified) took: from the verdict, or for a
    run folder written before it recorded that, from the two files' times."""
    if v.get("test_repro_seconds") is not None:
        return v["test_repro_seconds"]
    test, out = (pathlib.Path(v.get("run_dir") or "", f) for f in ("test_repro.py", "test_repro_output.txt"))
    return round(out.stat().st_mtime - test.stat().st_mtime, 2) if test.exists() and out.exists() else 0.0


def ours_row(case: str, who: str, ours: dict) -> dict:
    """A reprokit row: the time to a verified repro.py is minify's time less test_repro.py's run after it."""
    v = ours["data"]
    n = v.get("nodes") or {}
    test_s = test_repro_seconds(v)
    minify_s = v.get("minify_seconds")
    return {
        "case": case,
        "who": who,
        "verdict_ok": ours["verdict_ok"],
        "verdict_s": v.get("verdict_wall"),
        "trials": v.get("trials"),
        "repro_s": minify_s - test_s if minify_s else None,
        "minify_s": minify_s,
        "test_repro_s": test_s,
        "run_dir": v.get("run_dir"),
        "minify_trials": v.get("minify_trials"),
        "nodes": f"{n.get('original')}→{n.get('minified')}" if n else "-",
        "verified": v.get("repro_verified"),
        "repro_kind": v.get("repro_kind"),
        "stage": v.get("failing_stage"),
        "culprit": (v.get("subsystem") or {}).get("detail") or v.get("config"),
        "phases": ours["phases"],
        "wall": ours["wall"],
        "error": "" if v else ours["error"],
    }


def print_table(rows: list) -> None:
    print(
        f"{'case':<22} {'who':<22} {'right':<5} {'verdict s':>9} {'trials':>6} {'repro s':>8} {'+test s':>7} "
        f"{'nodes':>9} {'verified':>8} {'repro kind':>16} {'ratio verdict':>13} {'ratio repro':>11}"
    )
    for r in rows:
        print(
            f"{r['case']:<22} {r['who']:<22} {str(r['verdict_ok']):<5} {r['verdict_s'] or 0:>9.1f} "
            f"{str(r['trials']):>6} {r['repro_s'] or 0:>8.1f} {r.get('test_repro_s') or 0:>7.1f} {r['nodes']:>9} "
            f"{str(r['verified']):>8} {str(r.get('repro_kind') or ''):>16} {r.get('ratio_verdict', ''):>13} "
            f"{r.get('ratio_repro', ''):>11}"
        )
        if r.get("phases"):
            print(
                f"{'':<22} phases (trials, trial-s): "
                + ", ".join(
                    f"{k} {n} / {sec:.0f}" for k, (n, sec) in sorted(r["phases"].items(), key=lambda kv: -kv[1][1])
                )
            )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-torch", action="store_true", help="reprokit only (no PyTorch tools)")
    ap.add_argument("--no-warm", action="store_true", help="skip the warm-cache reprokit row")
    ap.add_argument("--no-minifier", action="store_true", help="skip PyTorch's after_aot minifier (verdict only)")
    ap.add_argument("--extra", default="", help="flags for one more, labelled reprokit row (e.g. --no-configs)")
    args = ap.parse_args()
    rows = []
    for case in args.cases.split(","):
        case = case if case.endswith(".py") else case + ".py"
        cache = pathlib.Path(tempfile.mkdtemp(prefix="bench-cache-"))
        cold = ours_row(case, "reprokit (cold cache)", run_reprokit(case, args.jobs, cache))
        rows.append(cold)
        if not args.no_warm:
            rows.append(ours_row(case, "reprokit (warm cache)", run_reprokit(case, args.jobs, cache)))
        if args.extra:
            fresh = pathlib.Path(tempfile.mkdtemp(prefix="bench-cache-"))
            rows.append(
                ours_row(
                    case, f"reprokit {args.extra}", run_reprokit(case, args.jobs, fresh, tuple(args.extra.split()))
                )
            )
        if not args.skip_torch:
            b = run_bisector(case)
            a = (
                {"wall": None, "nodes": None, "reproduces": None, "note": "not run (--no-minifier)"}
                if args.no_minifier
                else run_after_aot(case)
            )
            torch_row = {
                "case": case,
                "who": "pytorch",
                "verdict_ok": b["verdict_ok"],
                "verdict_s": b["wall"],
                "trials": b["runs"],
                "repro_s": a["wall"] or 0,
                "nodes": f"?→{a['nodes']}",
                "verified": a["reproduces"],
                "result": b["result"][:200],
                "note": a.get("note", ""),
            }
            rows.append(torch_row)
            for r in rows:
                if r["case"] == case and r["who"] != "pytorch":
                    r["ratio_verdict"] = ratio(r["verdict_s"], b["wall"])
                    # No ratio against a minifier that gave no working repro: its seconds bought nothing.
                    r["ratio_repro"] = ratio(r["repro_s"], a["wall"]) if a["reproduces"] else "no repro"
        for r in rows:
            if r["case"] == case:
                print(json.dumps(r, default=str), flush=True)
    print()
    print_table(rows)


if __name__ == "__main__":
    main()
