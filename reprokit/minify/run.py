"""The minify use case: capture the failing graph, cut it while it fails the same way, write repro.py."""
from __future__ import annotations

import time
from typing import Callable, Optional

from reprokit.errors import ReprokitError
from reprokit.data.records import Signature, Verdict
from reprokit.data.rundir import RunDir
from reprokit.data.stages import STAGE_TITLES
from reprokit.fx.graphcase import Edit, GraphShape
from reprokit.minify.graph import GraphOracle, graph_problem, reduce_graph
from reprokit.minify.locate import find_failing_graph
from reprokit.minify.repro import write_verified_repro
from reprokit.trial.runner import Runner

Emit = Callable[..., None]


def _noop(*_a, **_k):
    pass


def make_runner(run: RunDir, emit: Emit, jobs: int = 1) -> Runner:
    opts = run.read_json("run.json")["options"]
    return Runner(run, timeout=opts.get("timeout") or 600.0, jobs=jobs,
                  on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))


def minify_run(run: RunDir, runner: Optional[Runner] = None, emit: Emit = _noop, resume: bool = False) -> Verdict:
    """Minify the failing graph of a finished bisect run and write a verified repro.py into its folder."""
    v = Verdict.from_dict(run.read_json("verdict.json"))
    info = run.read_json("run.json")
    opts = info["options"]
    runner = runner or make_runner(run, emit)
    started, before = time.monotonic(), runner.executed
    if not v.failing_stage:
        raise ReprokitError(f"{run.path} has no failing stage to minify")
    if v.failing_stage == "eager":
        from reprokit.source.reduce import minify_source

        return minify_source(run, v, runner, emit, started, before)
    if v.graph is None:
        v.message = (v.message + " " if v.message else "") + "no single graph fails alone: nothing to minify"
        run.write_json("verdict.json", v.to_dict())
        return v
    stage = v.failing_stage if v.failing_stage in STAGE_TITLES else "user"
    original = Signature.from_dict(v.signature)
    accuracy = original.kind in ("accuracy", "exit") or original.exc_type == "AssertionError" or opts.get(
        "check_accuracy", False)
    found = find_failing_graph(runner, v, opts, info, stage, accuracy)
    if isinstance(found, str):
        return _give_up(run, v, found)
    case, meta, target, run_backward = found
    shape = GraphShape.from_meta(meta)
    emit("minify_start", graph=v.graph, nodes=meta["node_count"])
    notes = [meta.get("note")] if meta.get("note") else []
    if original.kind in ("exception", "crash") and not target.matches(original):
        notes.append(f"the graph alone fails as {target.short()!r}, not exactly as the script did")

    oracle = GraphOracle(runner, shape, case, stage, target, accuracy, run_backward)
    problem = graph_problem(oracle, _start(run, shape, case, resume), run, emit)
    try:
        best = reduce_graph(problem, shape, width=runner.jobs)
    except KeyboardInterrupt:
        best = problem.best
        v.message = "minify interrupted; repro.py is the smallest failing graph found so far"
    v.nodes = {"original": meta["node_count"], "minified": shape.size(best)}
    write_verified_repro(run, runner, v, case, best, stage, target, accuracy, run_backward, info.get("command", ""))
    if oracle.refused:
        notes.append(f"{len(oracle.refused)} smaller graphs failed differently and were refused "
                     "(see minify_refused.json)")
        run.write_json("minify_refused.json", oracle.refused)
    return _finish(run, v, runner, before, started, notes, emit)


def _start(run: RunDir, shape: GraphShape, case: str, resume: bool) -> Edit:
    """Where the search starts: the whole graph, or with --resume the best edit minify.json saved for this case."""
    if resume and run.exists("minify.json"):
        saved = run.read_json("minify.json")
        if saved.get("case") == case:
            return Edit.from_dict(saved["best"])
    return shape.original()


def _finish(run: RunDir, v: Verdict, runner: Runner, before: int, started: float, notes: list, emit: Emit) -> Verdict:
    v.minify_trials = runner.executed - before
    v.minify_seconds = round(time.monotonic() - started, 2)
    if notes:
        v.message = "; ".join(x for x in [v.message] + notes if x)
    run.write_json("verdict.json", v.to_dict())
    emit("minified", before=v.nodes["original"], after=v.nodes["minified"], trials=v.minify_trials,
         seconds=v.minify_seconds, verified=v.repro_verified)
    return v


def _give_up(run: RunDir, v: Verdict, why: str) -> Verdict:
    v.repro_verified = False
    v.message = (v.message + "; " if v.message else "") + why
    run.write_json("verdict.json", v.to_dict())
    return v
