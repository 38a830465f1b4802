"""The minify use case: capture the failing graph, cut it while it fails the same way, write repro.py."""

from __future__ import annotations

import time
from collections.abc import Callable

from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt, Signature, Verdict
from reprokit.data.rundir import RunDir
from reprokit.data.signature import LAUNCH_BLOCKING_ENV
from reprokit.data.stages import STAGE_TITLES
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.fx.graphcase import Edit, GraphShape
from reprokit.minify.graph import GraphOracle, graph_problem, reduce_graph
from reprokit.minify.locate import capture_spec, find_failing_graph, graph_alone
from reprokit.minify.reliability import measure
from reprokit.minify.repro import write_verified_repro
from reprokit.minify.walk_back import walk_back_most, walked_back_note
from reprokit.search import verified_back
from reprokit.trial.precheck import FakeCheck
from reprokit.trial.runner import Runner

Emit = Callable[..., None]


def _noop(*_a, **_k):
    pass


class CompiledIsCloser(NothingToIsolate):
    """The script's check saw compiled differ from eager, but compiled is the closer to float64: no compiler bug.
    message: what the verdict says of it; case: the folder holding the captured graph."""

    def __init__(self, text: str, message: str, case: str | None = None):
        super().__init__(text)
        self.message = message
        self.case = case


def make_runner(run_dir: RunDir, emit: Emit, jobs: int = 1) -> Runner:
    opts = run_dir.read_json("run.json")["options"]
    return Runner(
        run_dir,
        timeout=opts.get("timeout") or 600.0,
        jobs=jobs,
        on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c),
        on_start=lambda s: emit("trial_start", spec=s),
    )


def minify_isolation(
    run_dir: RunDir, isolation: Isolation, runner: Runner | None = None, emit: Emit = _noop, resume: bool = False
) -> Repro:
    """Minify what the bisect isolated into a verified repro.py, trying each kind of repro smallest first:
    the graph alone (or in the script's context), the graph minified inside the running script, the script
    reduced at source level. Every kind tried is recorded with what came of it (Repro.attempts)."""
    v = isolation.draft()
    info = run_dir.read_json("run.json")
    runner = runner or make_runner(run_dir, emit)
    if (v.cuda_fault or {}).get("launch_blocking"):  # as the bisect's trials ran (bisect/cuda.py)
        runner = runner.with_policy(env=LAUNCH_BLOCKING_ENV)
    started, before = time.monotonic(), runner.executed
    if not v.failing_stage:
        raise ReprokitError(f"{run_dir.path} has no failing stage to minify")
    v.repro_attempts = []
    if v.warm_cache:  # it fails only with inductor's caches on: the script, run cold then warm
        from reprokit.minify.warm_repro import minify_warm

        return minify_warm(run_dir, v, runner, emit, started, before)
    if info.get("capture"):  # bisect --from-capture: the captured graph, and no run of the job as a fall-back
        notes: list[str] = []
        if _captured_repro(run_dir, runner, v, info, emit, resume, notes):
            return _finish(v, runner, before, started, notes, emit)
        v.message = "no verified repro: " + "; ".join(f"{a.kind}: {a.result}" for a in v.repro_attempts)
        return Repro.of(v)
    if v.failing_stage != "eager" and v.graph is not None:
        notes = []
        if _graph_repros(run_dir, runner, v, info, emit, resume, notes):
            return _finish(v, runner, before, started, notes, emit)
    elif v.failing_stage != "eager":
        v.repro_attempts.append(ReproAttempt("graph", "no single graph fails alone: no graph to cut"))
    from reprokit.source.reduce import minify_source

    stage = "eager" if v.failing_stage == "eager" else "user"
    said = v.message  # the bisect's own message: not what the source reduction found
    v = minify_source(run_dir, v, runner, emit, started, before, stage=stage)
    why = v.message if v.message != said else ""
    v.repro_attempts.append(
        ReproAttempt(
            "source", "verified" if v.repro_verified else (why or "the reduced script does not fail the same way")
        )
    )
    if not v.repro_verified:
        v.repro_kind = None
        v.message = "no verified repro: " + "; ".join(f"{a.kind}: {a.result}" for a in v.repro_attempts)
    return Repro.of(v)


def _graph_repros(run_dir, runner, v, info, emit, resume, notes) -> bool:
    """The graph-level kinds in order; True once one of them wrote a verified repro.py."""
    opts = info["options"]
    stage = v.failing_stage if v.failing_stage in STAGE_TITLES else "user"
    original = Signature.from_dict(v.signature)
    accuracy = (
        original.kind in (OutcomeKind.ACCURACY, OutcomeKind.EXIT)
        or original.exc_type == "AssertionError"
        or opts.get("check_accuracy", False)
    )
    found = find_failing_graph(runner, v, opts, info, stage, accuracy)
    if isinstance(found, str):
        v.repro_attempts.append(ReproAttempt("graph", found))
        return False
    if found.meta.get("note"):
        notes.append(found.meta["note"])
    if found.signature is None and "more accurate" in found.note:
        # The script's check saw a difference, but compiled is the closer one to float64: no compiler bug.
        raise CompiledIsCloser(f"graph {v.graph} compiled differs from eager, but {found.note}", found.note, found.case)
    neighbour = (
        found.signature is not None
        and original.kind in (OutcomeKind.EXCEPTION, OutcomeKind.CRASH)
        and not (found.signature.matches(original) or accuracy and found.signature.kind == OutcomeKind.ACCURACY)
    )
    if neighbour:
        # Another failure, even through the wrappers' root cause: minifying it would report a neighbour.
        v.repro_attempts.append(ReproAttempt("graph", f"the graph alone fails differently ({found.signature.short()})"))
    elif found.signature is not None:
        kind = "graph_in_context" if found.in_context else "graph"
        oracle = GraphOracle(
            runner,
            GraphShape.from_meta(found.meta),
            found.case,
            stage,
            found.signature,
            accuracy,
            found.run_backward,
            precheck=fake_check(runner, run_dir, found.case),
            emit=emit,
        )
        if _reduce_and_write(run_dir, runner, v, info, emit, resume, oracle, found, kind, accuracy, notes):
            return True
    else:
        v.repro_attempts.append(ReproAttempt("graph", found.why))
    return _in_script(run_dir, runner, v, info, emit, found, stage, original, accuracy, notes)


def _captured_repro(run_dir, runner, v, info, emit, resume, notes) -> bool:
    """The graph a capture wrote, cut while it fails alone the way the job failed; True once repro.py is verified."""
    case, stage = info["capture"]["case"], v.failing_stage
    backward = info["capture"].get("phase") == "backward"  # the job failed in loss.backward()
    accuracy = Signature.from_dict(v.signature).kind == OutcomeKind.ACCURACY  # found by capture --check-accuracy
    found = graph_alone(runner, case, stage, accuracy, backward, "graph-alone")
    if found.signature is None or not found.signature.matches(Signature.from_dict(v.signature)):
        v.repro_attempts.append(ReproAttempt("graph", "the captured graph alone does not fail the way the job did"))
        return False
    if found.meta.get("note"):
        notes.append(found.meta["note"])
    kind = "graph_in_context" if found.in_context else "graph"
    oracle = GraphOracle(
        runner,
        GraphShape.from_meta(found.meta),
        case,
        stage,
        found.signature,
        accuracy,
        backward,
        precheck=fake_check(runner, run_dir, case),
        emit=emit,
    )
    return _reduce_and_write(run_dir, runner, v, info, emit, resume, oracle, found, kind, accuracy, notes)


def _in_script(run_dir, runner, v, info, emit, found, stage, original, accuracy, notes) -> bool:
    """Minify graph k inside the running script (the script's own check decides), then a standalone repro."""
    from reprokit.minify.inscript import ScriptOracle

    base = capture_spec(v, info["options"], info, stage, False, "in-script")
    shape = GraphShape.from_meta(found.meta)
    oracle = ScriptOracle(runner, shape, found.case, stage, original, base)
    if not oracle.fails_same(shape.original()):
        v.repro_attempts.append(
            ReproAttempt("graph_in_script", "the script no longer fails the same way with graph k spliced back in")
        )
        return False
    return _reduce_and_write(
        run_dir, runner, v, info, emit, False, oracle, found, "graph_in_script", accuracy, notes, strict=accuracy
    )


def _reduce_and_write(
    run_dir, runner, v, info, emit, resume, oracle, found, kind, accuracy, notes, strict=False
) -> bool:
    """Reduce with the oracle, write repro.py for the best edit and verify it; record the attempt."""
    shape = oracle.shape
    emit("minify_start", graph=v.graph, nodes=found.meta["node_count"])
    problem = graph_problem(oracle, _start(run_dir, shape, found.case, resume), run_dir, emit)
    # A signal (cli_signals) ends the search for good, no trial runs after it: nothing is lost, though, since
    # each smaller failing graph is in minify.json as it is found (`minify --resume` starts from it) and every
    # answer is in the journal.
    try:
        best = reduce_graph(problem, shape, width=runner.jobs, op=failing_op(v))
    finally:
        if oracle.precheck is not None:
            oracle.precheck.close()
    notes += prechecked_notes(run_dir, oracle)
    v.nodes = {"original": found.meta["node_count"], "minified": shape.size(best)}
    if oracle.share.ran_out:
        said = (
            f"the graph minify stopped at its share of time ({oracle.share.given:.0f} s): repro.py is the "
            f"smallest graph so far that fails the same way ({v.nodes['minified']} of "
            f"{v.nodes['original']} nodes), not a minimal one"
        )
        emit("note", text=said)
        notes.append(said)
    emit("phase", name="repro")
    target = found.signature or Signature("accuracy", None, "compiled output differs from eager", None)

    def verified(edit: Edit) -> bool:
        write_verified_repro(
            run_dir,
            runner,
            v,
            found.case,
            edit,
            oracle.stage,
            target,
            accuracy or strict,
            found.run_backward,
            info.get("command", ""),
            strict=strict,
        )
        measure(run_dir, v, runner.timeout, emit)  # below the floor of failures, not verified: a larger one is asked
        return bool(v.repro_verified)

    at = verified_back(problem.accepted, verified, most=walk_back_most(v))
    if at is not None and at != len(problem.accepted) - 1:
        said = walked_back_note(f"the graph of {v.nodes['minified']} nodes", f"{shape.size(best)} nodes")
        emit("note", text=said)
        notes.append(said)
    _record_attempt(run_dir, v, oracle, kind, notes)
    return bool(v.repro_verified)


def _record_attempt(run_dir: RunDir, v: Verdict, oracle: GraphOracle, kind: str, notes: list) -> None:
    """The graphs refused for failing differently (minify_refused.json, a note), and this kind's attempt."""
    assert v.nodes is not None  # _reduce_and_write counts the nodes before it writes the repro
    if oracle.refused:
        notes.append(
            f"{len(oracle.refused)} smaller graphs failed differently and were refused (see minify_refused.json)"
        )
        run_dir.write_json("minify_refused.json", oracle.refused)
    v.repro_attempts.append(
        ReproAttempt(
            kind,
            "verified"
            if v.repro_verified
            else f"repro.py of {v.nodes['minified']} nodes does not fail the same way alone",
        )
    )
    v.repro_kind = kind if v.repro_verified else None


def fake_check(runner: Runner, run_dir: RunDir, case: str) -> FakeCheck:
    """The fake-tensor check of this graph's cuts; its process starts only if a cut fails another way."""
    return FakeCheck(case, runner.cache_root, run_dir.file("precheck"))


def prechecked_notes(run_dir: RunDir, oracle: GraphOracle) -> list:
    """What the fake-tensor check did, in the run's notes; the cuts it refused in minify_prechecked.json."""
    check = oracle.precheck
    if not oracle.armed or check is None:
        return []
    if oracle.prechecked:
        run_dir.write_json("minify_prechecked.json", oracle.prechecked)
        return [
            f"{len(oracle.prechecked)} of {check.asked} cuts checked on fake tensors were refused without a "
            "trial: they cannot run (see minify_prechecked.json)"
        ]
    if check.unusable:
        return [f"cuts were not checked on fake tensors: {check.unusable}"]
    return []


def failing_op(v: Verdict) -> str | None:
    """The operator whose lowering the bisect found breaking ('aten.sum.dim_IntList'), or None."""
    sub = v.subsystem or {}
    detail = str(sub.get("detail") or "")
    if sub.get("name") != "lowerings" or detail.startswith("<"):  # a pass, or "<unavailable: ...>"
        return None
    return detail.split(" ")[0] or None


def _start(run_dir: RunDir, shape: GraphShape, case: str, resume: bool) -> Edit:
    """Where the search starts: the whole graph, or with --resume the best edit minify.json saved for this case."""
    if resume and run_dir.exists("minify.json"):
        saved = run_dir.read_json("minify.json")
        if saved.get("case") == case:
            return Edit.from_dict(saved["best"])
    return shape.original()


def _finish(v: Verdict, runner: Runner, before: int, started: float, notes: list, emit: Emit) -> Repro:
    v.minify_trials = runner.executed - before
    v.minify_seconds = round(time.monotonic() - started, 2)
    if notes:
        v.message = "; ".join(x for x in [v.message] + notes if x)
    assert v.nodes is not None  # a graph's repro counts its nodes before and after
    emit(
        "minified",
        before=v.nodes["original"],
        after=v.nodes["minified"],
        trials=v.minify_trials,
        seconds=v.minify_seconds,
        verified=v.repro_verified,
        reliability=v.repro_reliability,
    )
    return Repro.of(v)
