"""reprokit against PyTorch's AOTInductor minifier on the export test scripts (issue #20), by hand, not in CI.

    python bench/compare_export.py [--cases aoti_compile_error,aoti_accuracy] [--level4 [CASES]] [--skip-torch]
        [--skip-reprokit] [--run "nice 19"] [--note "not niced, load 0.3"] [--timeout 3600]
    python bench/compare_export.py --table-from run1.txt run2.txt

Per case (tests/export_cases/CASE.py), in a fresh folder with a fresh compile cache, one run each of:
  - `reprokit bisect CASE` with default flags (config flips, subsystems, minify and pack all on);
  - the script under PyTorch's AOTI minifier as its docs say (DUMP_AOTI_MINIFIER=1, the same as
    torch._inductor.config.aot_inductor.dump_aoti_minifier = True), then `python minifier_launcher.py minify`
    in the folder it was written to. --level4 adds AOTINDUCTOR_REPRO_LEVEL=4, the only level at which it checks
    accuracy (a user has to know to set it).
It prints, for both: stage, culprit, nodes (original→minified; lines where reprokit reduced the script's source),
whether the repro fails when run, reprokit's trials (bisect + minify) and seconds.
PyTorch's minifier names no stage or culprit: its culprit column says what it did, from what it printed (no launcher
written, the exception the launcher minified on, the launcher's crash). Above the table: start and end time (UTC)
and the load average at each, and --note (how it was run).
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

from compare import cannot_load  # bench/compare.py, beside this file: the one judge of a minifier repro

REPO = pathlib.Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "export_cases"
TIMEOUT = 3600


def all_cases() -> list:
    return sorted(p.stem for p in CASES.glob("*.py"))


def workdir(case: str) -> pathlib.Path:
    d = pathlib.Path(tempfile.mkdtemp(prefix="bench-export-"))
    shutil.copy(CASES / f"{case}.py", d / f"{case}.py")
    return d


def env_for(d: pathlib.Path) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TORCH_BISECT", "TORCHDYNAMO_REPRO", "DUMP_AOTI", "AOTINDUCTOR_REPRO"))
    }
    env["TORCHINDUCTOR_CACHE_DIR"] = str(d / "inductor-cache")  # cold, as a user's first try would be
    env["REPROKIT_CACHE_DIR"] = str(d / "reprokit-cache")
    env["PYTHONPATH"] = str(REPO)
    return env


def culprit(v: dict) -> str:
    """What reprokit names besides the stage: the lowering or pass, the config, the guard, the kernel."""
    named = []
    guard = re.search(r"Guard failed: (.*?)\)(?:;|$)", v.get("message") or "")
    if guard:  # the exported program would have refused the call the package answered
        named.append(f"program guard {guard.group(1)}")
    if v.get("subsystem"):
        named.append(str(v["subsystem"].get("detail") or v["subsystem"].get("name")).split(" (")[0])
    for key, field in (("export", "guard"), ("aoti_kernel", "kernel")):
        if (v.get(key) or {}).get(field):
            named.append(f"{key}: {v[key][field]}")
    if v.get("config"):
        named.append("config " + ",".join(v["config"]))
    # nothing narrower than the stage (a decompose failure): its message, else the failure it kept
    signature = v.get("signature") or {}
    failure = f"{signature.get('exc_type') or signature.get('kind')}: {signature.get('message')}" if signature else "-"
    return "; ".join(named) or (v.get("message") or failure)[:60]


def nodes_of(v: dict) -> str:
    """original→minified, in lines where the script was reduced at source level."""
    n = v.get("nodes") or {}
    if not n:
        return "-"
    return f"{n.get('original')}→{n.get('minified')}" + (" lines" if n.get("unit") == "lines" else "")


def run_reprokit(case: str) -> dict:
    d = workdir(case)
    t = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", f"{case}.py", "--json", "-o", str(d / "artifacts")],
        cwd=d,
        capture_output=True,
        text=True,
        env=env_for(d),
        timeout=TIMEOUT,
    )
    wall = time.monotonic() - t
    v = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    return {
        "case": case,
        "who": "reprokit",
        "stage": v.get("failing_stage") or f"exit {p.returncode}",
        "culprit": culprit(v) if v else last_line(p.stderr),
        "nodes": nodes_of(v),
        "repro_fails": v.get("repro_verified"),
        "seconds": round(wall, 1),
        "trials": v.get("trials"),
        "minify_trials": v.get("minify_trials"),
        "minify_seconds": v.get("minify_seconds"),
    }


def last_line(text: str) -> str:
    return (text.strip().splitlines() or ["-"])[-1]


def exception_of(stderr: str) -> str:
    """The exception a script died of: 'InductorError: CppCompileError' (g++'s output around it left out)."""
    # the line a traceback ends with (the last traceback's: a chained one ends with the exception raised last)
    lines = re.findall(r"^Traceback \(most recent call last\):\n(?:[ \t].*\n)*([A-Za-z_][\w.]*):?(.*)$", stderr, re.M)
    lines = lines or re.findall(r"^([A-Za-z_][\w.]*(?:Error|Exception|Failure)):?(.*)$", stderr, re.M)
    if not lines:
        return (stderr.strip().splitlines() or ["?"])[-1][:60]
    name, rest = lines[-1]
    return (name.rsplit(".", 1)[-1] + ":" + rest)[:60]


def crash_of(stderr: str) -> str:
    """Why the minifier's launcher died: the op its reload could not resolve (a custom op of the script's, which
    the launcher does not import), else the exception it raised."""
    unresolved = re.search(r"failed to resolve (torch\.ops\.[\w.]+)", stderr)
    return f"failed to resolve {unresolved.group(1)}" if unresolved else exception_of(stderr)


def program_nodes(text: str):
    """call_function nodes of the GraphModule a minifier repro prints (its module string, in comments or code)."""
    calls = re.findall(r"^[#\s]*\w+ = torch\.ops\.[\w.]+\(", text, re.M)
    return len(calls) or None


def run_aoti_minifier(case: str, level4: bool) -> dict:
    d = workdir(case)
    env = env_for(d)
    env["DUMP_AOTI_MINIFIER"] = "1"
    if level4:
        env["AOTINDUCTOR_REPRO_LEVEL"] = "4"
    row = {"case": case, "who": "pytorch aoti minifier" + (" (level 4)" if level4 else ""), "culprit": "-"}
    t = time.monotonic()
    script = subprocess.run(
        [sys.executable, f"{case}.py"], cwd=d, capture_output=True, text=True, env=env, timeout=TIMEOUT
    )
    failed = [exception_of(script.stderr)] if script.returncode else ["the script passed"]
    launchers = sorted(d.rglob("minifier_launcher.py"), key=lambda x: x.stat().st_mtime)
    if not launchers:
        return {
            **row,
            "stage": "-",
            "culprit": f"no launcher written ({failed[0][:70]})",
            "nodes": "-",
            "repro_fails": None,
            "seconds": round(time.monotonic() - t, 1),
        }
    launcher = launchers[-1]
    original = program_nodes(launcher.read_text())
    env.pop("DUMP_AOTI_MINIFIER")
    p = subprocess.run(
        [sys.executable, str(launcher), "minify"],
        cwd=launcher.parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )
    wall = time.monotonic() - t
    repros = sorted(
        (r for r in d.rglob("repro.py") if r.stat().st_mtime >= launcher.stat().st_mtime),
        key=lambda x: x.stat().st_mtime,
    )
    # it names no stage or culprit: the exception the script died of, which the launcher minifies on
    row.update(stage="-", culprit=f"minified on {failed[0]}", seconds=round(wall, 1))
    if not repros:
        said = f"crashed: {crash_of(p.stderr)}" if p.returncode else f"wrote no repro.py ({last_line(p.stderr)})"
        return {**row, "culprit": f"launcher {said} (on {failed[0]})", "nodes": f"{original}→-", "repro_fails": None}
    r = subprocess.run(
        [sys.executable, str(repros[-1])],
        cwd=repros[-1].parent,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )
    # a repro that cannot build its program (the script's custom op it never registered) fails, but not of the bug
    unresolved = cannot_load(r.stderr)
    if unresolved:
        row["culprit"] += f"; its repro.py dies of {unresolved}"
    return {
        **row,
        "nodes": f"{original}→{program_nodes(repros[-1].read_text())}",
        "repro_fails": r.returncode != 0 and not unresolved,
    }


def print_table(rows: list) -> None:
    """The rows as text; trials: reprokit's bisect + minify trials; at, load: when each started (UTC) and the
    machine's one-minute load average then; run: --run's words."""
    print(
        f"{'case':<28} {'who':<31} {'stage':<14} {'culprit':<80} {'nodes':>12} {'repro fails':>11} "
        f"{'trials':>8} {'s':>7} {'at':>8} {'load':>5}  run"
    )
    for r in rows:
        trials = f"{r['trials']}+{r['minify_trials']}" if r.get("trials") is not None else "-"
        print(
            f"{r['case']:<28} {r['who']:<31} {str(r['stage'])[:14]:<14} {str(r['culprit'])[:80]:<80} "
            f"{r['nodes']:>12} {str(r['repro_fails']):>11} {trials:>8} {r['seconds']:>7} {r.get('at', '-'):>8} "
            f"{r.get('load', '-'):>5}  {r.get('run', '-')}"
        )


def guarded(run, case: str, who: str, *args) -> dict:
    """One tool's row; a run past the time limit (or a harness error) is a row that says so, not a lost table."""
    t = time.monotonic()
    when = {"at": time.strftime("%H:%M:%S", time.gmtime()), "load": round(os.getloadavg()[0], 2)}
    try:
        return {**run(case, *args), **when}
    except subprocess.TimeoutExpired:
        what = f"timed out after {TIMEOUT} s"
    except Exception as e:  # noqa: BLE001 - the table is worth more than the traceback
        what = f"harness error: {type(e).__name__}: {e}"
    return {
        "case": case,
        "who": who,
        "stage": "-",
        "culprit": what,
        "nodes": "-",
        "repro_fails": None,
        "seconds": round(time.monotonic() - t, 1),
        **when,
    }


def stamp(what: str) -> str:
    """'start 2026-11-23 09:25:01 UTC, load average 0.31 0.52 0.60' (the machine's, one, five, fifteen minutes)."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{what} {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, load average {load}"


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(all_cases()), help="comma-separated, run in this order")
    ap.add_argument(
        "--level4",
        nargs="?",
        const="all",
        default="",
        help="also PyTorch's minifier at AOTINDUCTOR_REPRO_LEVEL=4 (on all cases, or on these)",
    )
    ap.add_argument("--skip-torch", action="store_true", help="reprokit only")
    ap.add_argument("--skip-reprokit", action="store_true", help="PyTorch's minifier only")
    ap.add_argument("--run", default="", help="how it was run (e.g. 'nice 0'), a column of every row")
    ap.add_argument("--note", default="", help="how it was run (nice, load), printed above the table")
    ap.add_argument("--timeout", type=int, default=TIMEOUT, help="seconds per tool and case")
    ap.add_argument(
        "--table-from",
        nargs="+",
        metavar="FILE",
        help="print one table of the rows (JSON lines) earlier runs printed, and run nothing",
    )
    args = ap.parse_args()
    TIMEOUT = args.timeout
    if args.table_from:  # a benchmark split into runs (a quiet slot, then the rest niced) as one table
        print_table([json.loads(line) for f in args.table_from for line in open(f) if line.startswith("{")])
        return
    started = stamp("start")
    print(started, flush=True)
    rows = []
    for case in args.cases.split(","):
        case = case[:-3] if case.endswith(".py") else case
        found = [] if args.skip_reprokit else [guarded(run_reprokit, case, "reprokit")]
        if not args.skip_torch:
            found.append(guarded(run_aoti_minifier, case, "pytorch aoti minifier", False))
            if args.level4 == "all" or case in args.level4.split(","):
                found.append(guarded(run_aoti_minifier, case, "pytorch aoti minifier (level 4)", True))
        for r in found:
            r["run"] = args.run or "-"
            print(json.dumps(r, default=str), flush=True)
        rows += found
    print()
    if args.note:
        print(args.note)
    print(f"torch {torch_version()}, python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {started}; {stamp('end')}")
    print_table(rows)


def torch_version() -> str:
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    return p.stdout.strip() or "?"


if __name__ == "__main__":
    main()
