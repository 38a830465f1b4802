"""reprokit's source reducer beside pysource-minimize and shrinkray (issue 50, item 3), run by hand, never in the
suite: on each case the same oracle, the same runner and the same share of time, then each result verified alike.

    pip install pysource-minimize shrinkray      # into the venv that runs this; neither is a reprokit dependency
    python bench/library_compare.py -o /tmp/libcmp tests/real_bugs/d_contiguous_alias_unsqueeze_guard.py ...
    python bench/library_compare.py --engines reprokit,pysource_minimize CASE.py   # leave an engine out

Per case: `reprokit bisect CASE --no-minify --no-pack` once, for the isolation (the failing stage and signature).
Then, for each engine, a fresh run folder (run.json and verdict.json copied; its own journal, so no engine is
answered from another's trials) and a Runner built as `reprokit bisect` builds it for a source reduction: the run's
jobs, each candidate forked from the warm worker. The oracle is source/reduce.SourceOracle, the one the source
reduction asks (fails the same way, passes with compile off, keeps the script's seeds, checks and graph breaks),
under one share of time (source_share: 240 s, or 40 runs of the script). The start is the script re-printed from its
AST, as minify_source starts.

- reprokit: its passes (SOURCE_PASSES) over a search.Problem, as minify_source runs them, candidates side by side.
- pysource_minimize: `minimize(start, checker)`, default flags; the checker asks the oracle.
- shrinkray: the newest release's CLI (26.9.13.0: its libcst Python passes and byte passes; no language model),
  from a Python 3.12 venv named by SHRINKRAY=PATH, one test at a time; each test sends its text to this process,
  whose oracle answers. A candidate that does not compile is refused before the oracle, as pysource-minimize
  refuses its own.
- shrinkray_0.0.2: the only release Python 3.11 installs, as a library: `Reducer(start, predicate).run()` (byte
  cuts, one predicate at a time: the Runner is not asked from several threads).

Once the share is spent the oracle refuses every candidate without a trial; a library is then stopped and its
latest accepted text is its result. Each result is then verified as minify_source verifies repro.py
(source/verify.Checks.verified: two fresh interpreters fail the same way and one with compile off passes), unpolished,
so the sizes compare the engines alone (reprokit bisect's repro is then polished by ruff). "oracle calls": candidate trials run compiled;
"trials": all source trials (the compile-off checks of the candidates that failed the same way too); "asked": the
library's checker calls, those refused without a trial included; seconds: the engine's wall time.
"""

from __future__ import annotations

import argparse
import ast
import functools
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable

from reprokit.app.common import noop
from reprokit.app.runners import open_runner
from reprokit.app.verdict_file import isolation_of
from reprokit.data.phases import Repro
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.report.pack_facts import load_verdict
from reprokit.search import Problem, Share, run_passes
from reprokit.source import reduce
from reprokit.source.passes import source_size
from reprokit.source.verify import Checks

BISECT = "from reprokit.cli import main; main()"
ENGINES = ("reprokit", "pysource_minimize", "shrinkray", "reprokit+pysource_minimize", "shrinkray_0.0.2")
# An engine that finishes another's result: it starts from that engine's text (same case), with a share of its own.
AFTER = {"reprokit+pysource_minimize": "reprokit"}


class CapReached(Exception):
    """The share of time is spent: a library is stopped, its latest accepted text its result."""


class Asked:
    """The oracle as a library's checker: counts the calls, keeps the latest text accepted, stops at the cap."""

    def __init__(self, oracle: reduce.SourceOracle, start: str):
        self.oracle, self.best, self.calls = oracle, start, 0

    def __call__(self, source: str) -> bool:
        if self.oracle.share.spent():
            raise CapReached
        self.calls += 1
        if self.oracle.fails_same(source):
            self.best = source
            return True
        return False


def isolate(case: str, out: str, width: int | None = None) -> str:
    """`reprokit bisect CASE --no-minify --no-pack` in out/isolate: the run folder holding the isolation."""
    folder = os.path.join(out, "isolate")
    if os.path.isdir(folder):  # --reuse: isolated by an earlier call (--isolate-only)
        (run,) = glob.glob(os.path.join(folder, "*"))
        return run
    jobs = ["--jobs", str(width)] if width else []
    subprocess.run(
        [sys.executable, "-c", BISECT, "bisect", case, "--no-minify", "--no-pack", "--json", *jobs, "-o", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    (run,) = glob.glob(os.path.join(folder, "*"))
    return run


def fresh_run(isolated: str, out: str, engine: str) -> RunDir:
    """A run folder of its own for one engine: the isolation's run.json and verdict.json, an empty journal."""
    run_dir = RunDir.create(out, engine)
    for name in ("run.json", "verdict.json"):
        shutil.copy(os.path.join(isolated, name), run_dir.file(name))
    return run_dir


def by_reprokit(oracle: reduce.SourceOracle, start: str, width: int) -> tuple[str, int | None]:
    """reprokit's source passes to their fixed point, as minify_source runs them."""
    problem = Problem(start, oracle.fails_same, size=source_size, first_failing=oracle.first_failing, width=width)
    problem.test(start)  # answered from the journal: the start was asked already
    run_passes(problem, reduce.SOURCE_PASSES)
    return problem.best, None


def by_pysource_minimize(oracle: reduce.SourceOracle, start: str, width: int) -> tuple[str, int | None]:
    """pysource-minimize's minimize(source, checker), default flags."""
    from pysource_minimize import minimize

    asked = Asked(oracle, start)
    try:
        return minimize(start, asked), asked.calls
    except Exception:
        # A checker's exception leaves minimize unwound (its `finally` may raise another in its place).
        if not oracle.share.spent():
            raise
        return asked.best, asked.calls


def by_shrinkray(oracle: reduce.SourceOracle, start: str, width: int) -> tuple[str, int | None]:
    """shrinkray 0.0.2's Reducer over the text's bytes, its default strategies, one predicate at a time."""
    from shrinkray import Reducer  # type: ignore[import-untyped]  # 0.0.2 ships no types

    asked = Asked(oracle, start)

    def predicate(data: bytes) -> bool:
        try:
            text = data.decode()
            compile(text, "<candidate>", "exec")
        except (UnicodeDecodeError, SyntaxError, ValueError):
            return False
        return asked(text)

    reducer = Reducer(start.encode(), predicate, parallelism=1)
    try:
        reducer.run()
    except CapReached:
        pass
    return reducer.target.decode(), asked.calls


# The newest shrinkray (26.x: libcst Python passes beside its byte passes) needs Python 3.12, and torch 2.13's CPU
# wheel here is for 3.11: it runs as its own command, from a 3.12 venv (`--shrinkray PATH`), and its
# interestingness test asks this process's oracle over a socket.
SHRINKRAY = os.environ.get("SHRINKRAY", "shrinkray")
TEST = """import socket, sys
with open(sys.argv[1], "rb") as f:
    data = f.read()
s = socket.socket(socket.AF_UNIX)
s.connect(%r)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
sys.exit(0 if s.recv(1) == b"1" else 1)
"""


def by_shrinkray_cli(oracle: reduce.SourceOracle, start: str, width: int) -> tuple[str, int | None]:
    """The newest shrinkray's CLI, default passes but its language-model ones (`--no-llm`), one test at a time;
    each test asks the oracle here, in the order shrinkray sends them."""
    asked, spent = Asked(oracle, start), threading.Event()
    folder = tempfile.mkdtemp(prefix="shrinkray-")
    address = os.path.join(folder, "oracle.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(address)
    server.listen(8)

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            with conn:
                data = b"".join(iter(functools.partial(conn.recv, 65536), b""))
                try:
                    text = data.decode()
                    compile(text, "<candidate>", "exec")
                    ok = asked(text)
                except CapReached:
                    ok = False
                    spent.set()
                except (UnicodeDecodeError, SyntaxError, ValueError):
                    ok = False
                try:
                    conn.sendall(b"1" if ok else b"0")
                except OSError:  # shrinkray gave up on that test (it found a smaller text meanwhile)
                    pass

    threading.Thread(target=serve, daemon=True).start()
    test = os.path.join(folder, "test.sh")
    with open(os.path.join(folder, "test.py"), "w") as f:
        f.write(TEST % address)
    with open(test, "w") as f:
        f.write(f'#!/bin/sh\nexec {sys.executable} -S -E {folder}/test.py "$1"\n')
    os.chmod(test, 0o755)
    case = os.path.join(folder, "case.py")
    with open(case, "w") as f:
        f.write(start)
    flags = ["--ui", "basic", "--no-llm", "--no-history", "--assume-deterministic", "--input-type", "arg"]
    proc = subprocess.Popen(
        [SHRINKRAY, *flags, "--parallelism", "1", "--timeout", "600", "--volume", "quiet", test, case],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while proc.poll() is None and not spent.is_set():
        time.sleep(0.5)
    proc.kill()
    proc.wait()
    return asked.best, asked.calls


DRIVERS: dict[str, Callable[[reduce.SourceOracle, str, int], tuple[str, int | None]]] = {
    "reprokit": by_reprokit,
    "pysource_minimize": by_pysource_minimize,
    "shrinkray": by_shrinkray_cli,
    "shrinkray_0.0.2": by_shrinkray,
    "reprokit+pysource_minimize": by_pysource_minimize,
}


def run_engine(
    isolated: str, out: str, engine: str, begin: str | None = None, width: int | None = None, share: float | None = None
) -> tuple[dict, str]:
    """One engine on one case, in a run folder of its own: its row (result, counts, seconds and verification) and
    its text. begin: the text a finishing engine starts from (the oracle still asks the script first: its first
    run sets the candidates' limit, and its seeds, checks and graph breaks are what every candidate keeps)."""
    run_dir = fresh_run(isolated, out, engine)
    verdict = load_verdict(run_dir)
    isolation = isolation_of(verdict)
    facts = RunFacts.of(run_dir.read_json("run.json"))
    opts = facts.options
    stage = "eager" if isolation.failing_stage == "eager" else "user"  # as minify/minifier._source_repro asks
    with open(isolation.script) as f:
        original = f.read()
    start = ast.unparse(ast.parse(original)) + "\n"
    with open_runner(
        run_dir,
        noop,
        timeout=opts.get("timeout") or 600.0,
        jobs=width or int(opts.get("jobs") or 1),
        warm_script=isolation.script,
    ) as runner:
        given = reduce.source_share() if share is None else Share(lambda seconds: share)
        oracle = reduce.SourceOracle(run_dir, isolation, runner, stage, None, given, opts["cwd"])
        if not oracle.fails_same(start):
            return {"engine": engine, "error": "the re-printed script does not fail the same way"}, start
        started = time.monotonic()
        result, asked = DRIVERS[engine](oracle, begin or start, runner.jobs)
        seconds = time.monotonic() - started
        run_dir.write_text("repro.py", result)
        checked = Checks(run_dir, isolation, runner, None, noop, facts).verified(Repro(), result)
    labels = [e.get("label") or "" for e in run_dir.journal()]
    source = [x for x in labels if x.startswith("source-")]
    row = {
        "engine": engine,
        "before": reduce.code_lines(begin or original),
        "after": reduce.code_lines(result),
        "oracle_calls": sum(1 for x in source if not x.endswith("-no-compile")),
        "trials": len(source),
        "asked": asked,
        "seconds": round(seconds, 1),
        "share_ran_out": oracle.share.ran_out,
        "verified": bool(checked.verified),
    }
    return row, result


def table(rows: list[dict]) -> str:
    """The markdown table: a row per case and engine, then each engine's totals and medians."""
    keys = [
        "case",
        "engine",
        "before",
        "after",
        "oracle_calls",
        "trials",
        "asked",
        "seconds",
        "share_ran_out",
        "verified",
    ]
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join("-" if r.get(k) is None else str(r[k]) for k in keys) + " |" for r in rows]
    for engine in dict.fromkeys(r["engine"] for r in rows):
        mine = [r for r in rows if r["engine"] == engine and "after" in r]
        if not mine:
            continue
        total = {k: sum(r[k] for r in mine) for k in ("before", "after", "oracle_calls", "trials", "seconds")}
        verified = sum(r["verified"] for r in mine)
        lines.append(
            f"| all {len(mine)} | {engine} | {total['before']} | {total['after']} | {total['oracle_calls']} | "
            f"{total['trials']} | | {total['seconds']:.0f} | | {verified} of {len(mine)} |"
        )
        med = {k: statistics.median(r[k] for r in mine) for k in ("after", "oracle_calls", "seconds")}
        lines.append(f"| median | {engine} | | {med['after']} | {med['oracle_calls']} | | | {med['seconds']:.0f} | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+")
    parser.add_argument("-o", "--output-dir", default="bench-library-compare")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, of " + ", ".join(ENGINES))
    # Many cases side by side (the device machine's cores): each case isolated once, then each engine a process.
    parser.add_argument("--isolate-only", action="store_true", help="isolate each case, then stop")
    parser.add_argument("--reuse", action="store_true", help="start from the isolation an earlier call left")
    parser.add_argument("--width", type=int, help="candidates side by side (the runner's jobs); default the run's")
    parser.add_argument("--share", type=float, help="seconds each engine may spend; default the source share")
    args = parser.parse_args()
    engines = args.engines.split(",")
    rows: list[dict] = []
    for case in args.cases:
        name = os.path.splitext(os.path.basename(case))[0]
        out = os.path.abspath(os.path.join(args.output_dir, name))
        os.makedirs(out, exist_ok=args.reuse)
        isolated = isolate(os.path.abspath(case), out, args.width)
        if args.isolate_only:
            continue
        texts: dict[str, str] = {}
        for engine in engines:
            begin = texts.get(AFTER.get(engine, ""))
            row, texts[engine] = run_engine(isolated, out, engine, begin, args.width, args.share)
            rows.append({"case": name, **row})
            print(json.dumps(rows[-1]), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
