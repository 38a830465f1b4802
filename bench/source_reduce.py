"""The source reduction's cost (issue #50), run by hand, never in the suite: candidates per second and oracle calls
per reduction, on genuine cases whose repro comes from source reduction.

    python bench/source_reduce.py tests/real_bugs/b_nested_region_global_rebind.py ...
    python bench/source_reduce.py --reprokit-root /tmp/before CASE.py ...   # another tree of reprokit ("before")
    python bench/source_reduce.py --candidates 40 CASE.py                     # one candidate's cost, warm and cold

Each case runs as the README tells users, `reprokit bisect CASE.py` (with --no-pack --json), one at a time. From the
run folder: the candidates (trials labelled source-*), the oracle calls among them (a candidate run compiled; the
rest are the compile-off checks of those that failed the same way), the wall time from the first candidate's start
to the last one's end (its trial folder's spec.json and result.json), and the repro's size and verification.

With --candidates N: N candidates of the script (the script itself, each with a comment of its own, so none is
answered from the journal) asked as the source reduction asks them, through the Runner's map with the run's jobs,
once forked from the warm worker and once each in a fresh interpreter; the seconds per candidate of each.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time

BISECT = "from reprokit.cli import main; main()"


def run_case(case: str, out: str, root: str | None) -> dict:
    """One `reprokit bisect CASE` and what its run folder says of the source reduction."""
    env = dict(os.environ)
    if root:  # that tree's reprokit, in this process and in every trial it starts (trial/environment.import_root)
        env["PYTHONPATH"] = root
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", BISECT, "bisect", case, "--no-pack", "--json", "-o", out],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wall = time.monotonic() - started
    (run,) = glob.glob(os.path.join(out, "*"))
    with open(os.path.join(run, "verdict.json")) as f:
        verdict = json.load(f)
    labels = []
    with open(os.path.join(run, "journal.jsonl")) as f:
        for line in f:
            labels.append(json.loads(line)["label"] or "")
    source = [x for x in labels if x.startswith("source-")]
    span = candidate_span(run)
    nodes = verdict.get("nodes") or {}
    return {
        "case": os.path.basename(case),
        "repro": verdict.get("repro_kind"),
        "lines": f"{nodes.get('original')} -> {nodes.get('minified')}",
        "verified": verdict.get("repro_verified"),
        "oracle_calls": sum(1 for x in source if not x.endswith("-no-compile")),
        "candidate_trials": len(source),
        "candidate_seconds": round(span, 1),
        "per_second": round(len(source) / span, 2) if span else None,
        "minify_seconds": verdict.get("minify_seconds"),
        "whole_seconds": round(wall, 1),
    }


def candidate_span(run: str) -> float:
    """Seconds from the first source candidate's start to the last one's end (its trial folder's files)."""
    starts, ends = [], []
    for folder in glob.glob(os.path.join(run, "trials", "source-*")):
        spec, result = os.path.join(folder, "spec.json"), os.path.join(folder, "result.json")
        if os.path.exists(spec):
            starts.append(os.path.getmtime(spec))
        ends.append(os.path.getmtime(result if os.path.exists(result) else folder))
    return max(ends) - min(starts) if starts and ends else 0.0


def candidate_cost(case: str, n: int, warm: bool, jobs: int) -> dict:
    """Seconds per candidate of `case` asked n at a time through the Runner, warm or cold (REPROKIT_WARM=0)."""
    import tempfile

    from reprokit.app.runners import script_forks
    from reprokit.data.records import TrialSpec, text_hash
    from reprokit.data.rundir import RunDir
    from reprokit.trial.runner import Runner

    os.environ["REPROKIT_WARM"] = "1" if warm else "0"
    run_dir = RunDir.create(tempfile.mkdtemp(prefix="bench-candidates-"), "candidates")
    runner = Runner(run_dir, timeout=300, jobs=jobs, **script_forks(case))
    with open(case) as f:
        text = f.read()

    def spec(i: int) -> TrialSpec:
        source = f"{text}\n# candidate {i}\n"
        run_dir.write_text(f"c{i}.py", source)
        script = run_dir.file(f"c{i}.py")
        return TrialSpec(
            mode="script",
            stage="eager",
            script=script,
            cwd=os.path.dirname(case),
            label=f"source-{i}",
            path_dirs=(os.path.dirname(case),),
            script_hash=text_hash(source),
        )

    try:
        runner(spec(-1))  # starts the warm worker (once a run), as the script's first run does in a bisect
        started = time.monotonic()
        outcomes = runner.map([spec(i) for i in range(n)])
        seconds = time.monotonic() - started
    finally:
        runner.close()
    return {
        "case": os.path.basename(case),
        "warm": warm,
        "jobs": jobs,
        "candidates": n,
        "seconds_per_candidate": round(seconds / n, 3),
        "trial_seconds_mean": round(sum(o.seconds for o in outcomes) / n, 3),
        "kinds": sorted({o.kind for o in outcomes}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--reprokit-root", help="a tree of reprokit to run instead of this one (git archive)")
    parser.add_argument("-o", "--output-dir", default="bench-source-reduce")
    parser.add_argument("--candidates", type=int, help="time N candidates of each case, warm and cold, instead")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.candidates:
        for case in args.cases:
            for warm in (True, False):
                print(json.dumps(candidate_cost(os.path.abspath(case), args.candidates, warm, args.jobs)), flush=True)
        return
    rows = []
    for case in args.cases:
        out = os.path.join(args.output_dir, os.path.splitext(os.path.basename(case))[0])
        os.makedirs(out, exist_ok=False)
        rows.append(run_case(os.path.abspath(case), out, args.reprokit_root))
        print(json.dumps(rows[-1]), flush=True)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
