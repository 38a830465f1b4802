"""The minifier: capture the failing graph, cut it while it fails the same way, write repro.py; each kind of repro
tried in turn (the graph alone or in its context, the graph inside the running script, the script's source)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from reprokit.data.events import Emit, Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.signature import LAUNCH_BLOCKING_ENV, Signature
from reprokit.data.stages import STAGE_TITLES
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.fx.graphcase import Edit, GraphShape
from reprokit.minify.graph import GraphOracle, graph_problem, reduce_graph
from reprokit.minify.locate import capture_spec, find_failing_graph, graph_alone
from reprokit.minify.reliability import measure
from reprokit.minify.repro import ReproJob, write_verified_repro
from reprokit.minify.walk_back import walk_back_most, walked_back_note
from reprokit.search import verified_back
from reprokit.trial.precheck import FakeCheck
from reprokit.trial.runner import Runner


class CompiledIsCloser(NothingToIsolate):
    """The script's check saw compiled differ from eager, but compiled is the closer to float64: no compiler bug.
    message: what the verdict says of it; case: the folder holding the captured graph."""

    def __init__(self, text: str, message: str, case: str | None = None):
        super().__init__(text)
        self.message = message
        self.case = case


@dataclass
class Minify:
    """One minify call's inputs and what it has tried so far: each kind's attempt, the notes for the verdict's
    message, the latest repro written (the verified one, or the last checked), and the case folder of the last
    graph cut that shrank (the first diverging node is asked of it)."""

    run_dir: RunDir
    isolation: Isolation
    runner: Runner
    emit: Emit
    facts: RunFacts
    resume: bool
    attempts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    said: list = field(default_factory=list)  # what a written candidate said (could not write it, its rate)
    latest: Repro = field(default_factory=Repro)
    case: str | None = None

    def tried(self, kind: str, result: str) -> None:
        self.attempts.append(ReproAttempt(kind, result))

    def message(self) -> str:
        return "; ".join(x for x in (self.isolation.message, *self.said) if x)

    def no_repro(self) -> Repro:
        """What minify hands on when no kind verified: every kind tried and why not."""
        said = "no verified repro: " + "; ".join(f"{a.kind}: {a.result}" for a in self.attempts)
        return dataclasses.replace(self.latest, kind=None, attempts=tuple(self.attempts), message=said)


def minify_isolation(
    run_dir: RunDir, isolation: Isolation, runner: Runner, emit: Emit, facts: RunFacts, resume: bool = False
) -> Repro:
    """Minify what the bisect isolated into a verified repro.py, trying each kind of repro smallest first:
    the graph alone (or in the script's context), the graph minified inside the running script, the script
    reduced at source level. Every kind tried is recorded with what came of it (Repro.attempts); Repro.case is
    the folder the last graph cut that shrank was made in."""
    if (isolation.cuda_fault or {}).get("launch_blocking"):  # as the bisect's trials ran (bisect/cuda.py)
        runner = runner.with_policy(env=LAUNCH_BLOCKING_ENV)
    started, before = time.monotonic(), runner.executed
    if not isolation.failing_stage:
        raise ReprokitError(f"{run_dir.path} has no failing stage to minify")
    if isolation.warm_cache:  # it fails only with inductor's caches on: the script, run cold then warm
        from reprokit.minify.warm_repro import minify_warm

        return minify_warm(run_dir, isolation, facts, runner, emit, started, before)
    m = Minify(run_dir, isolation, runner, emit, facts, resume)
    return dataclasses.replace(_kinds(m, started, before), case=m.case)


def _kinds(m: Minify, started: float, before: int) -> Repro:
    """Each kind of repro in turn until one verifies: the first verified, else what the last one left."""
    if m.facts.capture:  # bisect --from-capture: the captured graph, and no run of the job as a fall-back
        if _captured_repro(m):
            return _finish(m, before, started)
        return m.no_repro()
    if m.isolation.failing_stage != "eager" and m.isolation.graph is not None:
        if _graph_repros(m):
            return _finish(m, before, started)
    elif m.isolation.failing_stage != "eager":
        m.tried("graph", "no single graph fails alone: no graph to cut")
    return _source_repro(m, started, before)


def _source_repro(m: Minify, started: float, before: int) -> Repro:
    """The script reduced at source level (source/reduce), from what the kinds before it wrote."""
    from reprokit.source.reduce import minify_source

    stage = "eager" if m.isolation.failing_stage == "eager" else "user"
    said = m.message()  # the bisect's own message: not what the source reduction found
    prior = dataclasses.replace(m.latest, message=said)
    r = minify_source(
        m.run_dir, m.isolation, m.runner, m.emit, started, before, stage=stage, prior=prior, facts=m.facts
    )
    why = r.message if r.message != said else ""
    m.tried("source", "verified" if r.verified else (why or "the reduced script does not fail the same way"))
    repro = dataclasses.replace(r, attempts=tuple(m.attempts))
    return repro if r.verified else dataclasses.replace(m.no_repro(), **_source_fields(repro))


def _source_fields(repro: Repro) -> dict:
    """What a source reduction that did not verify leaves in the verdict: its repro.py and its counts."""
    names = ("path", "verified", "signature", "nodes_before", "nodes_after", "unit", "fresh_runs", "reliability")
    return {name: getattr(repro, name) for name in (*names, "trials", "seconds", "scrubbed", "inputs", "input_bytes")}


def _graph_repros(m: Minify) -> bool:
    """The graph-level kinds in order; True once one of them wrote a verified repro.py."""
    v, opts = m.isolation, m.facts.options
    stage = v.failing_stage if v.failing_stage in STAGE_TITLES else "user"
    original = Signature.from_dict(v.signature)
    accuracy = (
        original.kind in (OutcomeKind.ACCURACY, OutcomeKind.EXIT)
        or original.exc_type == "AssertionError"
        or opts.get("check_accuracy", False)
    )
    found = find_failing_graph(m.runner, v, m.facts, stage, accuracy)
    if isinstance(found, str):
        m.tried("graph", found)
        return False
    if found.meta.get("note"):
        m.notes.append(found.meta["note"])
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
        m.tried("graph", f"the graph alone fails differently ({found.signature.short()})")
    elif found.signature is not None:
        kind = "graph_in_context" if found.in_context else "graph"
        oracle = _oracle(m, found, found.case, stage, accuracy, found.run_backward)
        if _reduce_and_write(m, oracle, found, kind, accuracy, m.resume):
            return True
    else:
        m.tried("graph", found.why)
    return _in_script(m, found, stage, original, accuracy)


def _oracle(m: Minify, found, case: str, stage: str, accuracy: bool, backward: bool) -> GraphOracle:
    """The graph-alone oracle of a captured case: it fails the way `found` saw it fail."""
    precheck = fake_check(m.runner, m.run_dir, case)
    shape = GraphShape.from_meta(found.meta)
    return GraphOracle(
        m.runner, shape, case, stage, found.signature, accuracy, backward, precheck=precheck, emit=m.emit
    )


def _captured_repro(m: Minify) -> bool:
    """The graph a capture wrote, cut while it fails alone the way the job failed; True once repro.py is verified."""
    assert m.facts.capture is not None  # asked only of a capture's run
    case, stage = m.facts.capture["case"], m.isolation.failing_stage
    assert stage is not None  # minify_isolation refuses an isolation without one
    backward = m.facts.capture_phase == "backward"  # the job failed in loss.backward()
    original = Signature.from_dict(m.isolation.signature)
    accuracy = original.kind == OutcomeKind.ACCURACY  # found by capture --check-accuracy
    found = graph_alone(m.runner, case, stage, accuracy, backward, "graph-alone")
    if found.signature is None or not found.signature.matches(original):
        m.tried("graph", "the captured graph alone does not fail the way the job did")
        return False
    if found.meta.get("note"):
        m.notes.append(found.meta["note"])
    kind = "graph_in_context" if found.in_context else "graph"
    return _reduce_and_write(m, _oracle(m, found, case, stage, accuracy, backward), found, kind, accuracy, m.resume)


def _in_script(m: Minify, found, stage: str, original: Signature, accuracy: bool) -> bool:
    """Minify graph k inside the running script (the script's own check decides), then a standalone repro."""
    from reprokit.minify.inscript import ScriptOracle

    base = capture_spec(m.isolation, m.facts, stage, False, "in-script")
    shape = GraphShape.from_meta(found.meta)
    oracle = ScriptOracle(m.runner, shape, found.case, stage, original, base)
    if not oracle.fails_same(shape.original()):
        m.tried("graph_in_script", "the script no longer fails the same way with graph k spliced back in")
        return False
    return _reduce_and_write(m, oracle, found, "graph_in_script", accuracy, False, strict=accuracy)


def _reduce_and_write(m: Minify, oracle, found, kind: str, accuracy: bool, resume: bool, strict=False) -> bool:
    """Reduce with the oracle, write repro.py for the best edit and verify it; record the attempt."""
    shape, v, emit = oracle.shape, m.isolation, m.emit
    before = found.meta["node_count"]
    emit(Event.MINIFY_START, graph=v.graph, nodes=before)
    problem = graph_problem(oracle, _start(m.facts, shape, found.case, resume), m.run_dir, emit)
    # A signal (cli_signals) ends the search for good, no trial runs after it: nothing is lost, though, since
    # each smaller failing graph is in minify.json as it is found (`minify --resume` starts from it) and every
    # answer is in the journal.
    try:
        best = reduce_graph(problem, shape, width=m.runner.jobs, op=failing_op(v))
    finally:
        if oracle.precheck is not None:
            oracle.precheck.close()
    if len(problem.accepted) > 1:  # it shrank: minify.json names this case now
        m.case = oracle.case
    m.notes += prechecked_notes(m.run_dir, oracle)
    m.latest = dataclasses.replace(m.latest, nodes_before=before, nodes_after=shape.size(best), unit=None)
    if oracle.share.ran_out:
        _note(
            m,
            f"the graph minify stopped at its share of time ({oracle.share.given:.0f} s): repro.py is the "
            f"smallest graph so far that fails the same way ({shape.size(best)} of {before} nodes), not a "
            "minimal one",
        )
    emit(Event.PHASE, name="repro")
    target = found.signature or Signature("accuracy", None, "compiled output differs from eager", None)
    judged = (oracle.stage, target, accuracy or strict, found.run_backward, m.facts, before, strict)

    def verified(edit: Edit) -> bool:
        job = ReproJob(v, found.case, edit, *judged)
        written = write_verified_repro(m.run_dir, m.runner, job)
        # below the floor of failures, not verified: a larger one is asked
        written = measure(m.run_dir, written, v.signature, m.runner.timeout, emit, m.facts.python)
        m.said += [written.message] if written.message else []
        m.latest = _merged(m.latest, written)
        return bool(m.latest.verified)

    at = verified_back(problem.accepted, verified, most=walk_back_most(v.flaky))
    if at is not None and at != len(problem.accepted) - 1:
        _note(m, walked_back_note(f"the graph of {m.latest.nodes_after} nodes", f"{shape.size(best)} nodes"))
    _record_attempt(m, oracle, kind)
    return bool(m.latest.verified)


def _merged(latest: Repro, written: Repro) -> Repro:
    """The latest repro after a candidate's: what its writing set replaces what the one before set; its test and
    its rate only when it verified; nothing but `verified` when repro.py could not be written."""
    if written.path is None:
        return dataclasses.replace(latest, verified=written.verified)
    names: tuple[str, ...] = ("path", "verified", "fresh_runs", "signature", "nodes_after", "input_bytes", "inputs")
    names += (
        ("inputs_note", "scrubbed")
        + (_TESTED if written.verified else ())
        + (("reliability",) if written.reliability else ())
    )
    return dataclasses.replace(latest, **{name: getattr(written, name) for name in names})


_TESTED = ("test_repro", "test_repro_seconds", "test_repro_verified", "test_repro_failure")


def _note(m: Minify, said: str) -> None:
    """A note said now and added to the verdict's message."""
    m.emit(Event.NOTE, text=said)
    m.notes.append(said)


def _record_attempt(m: Minify, oracle, kind: str) -> None:
    """The graphs refused for failing differently (minify_refused.json, a note), and this kind's attempt."""
    if oracle.refused:
        m.notes.append(
            f"{len(oracle.refused)} smaller graphs failed differently and were refused (see minify_refused.json)"
        )
        m.run_dir.write_json("minify_refused.json", oracle.refused)
    verified = bool(m.latest.verified)
    m.tried(
        kind, "verified" if verified else f"repro.py of {m.latest.nodes_after} nodes does not fail the same way alone"
    )
    m.latest = dataclasses.replace(m.latest, kind=kind if verified else None)


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


def failing_op(isolation: Isolation) -> str | None:
    """The operator whose lowering the bisect found breaking ('aten.sum.dim_IntList'), or None."""
    sub = isolation.subsystem or {}
    detail = str(sub.get("detail") or "")
    if sub.get("name") != "lowerings" or detail.startswith("<"):  # a pass, or "<unavailable: ...>"
        return None
    return detail.split(" ")[0] or None


def _start(facts: RunFacts, shape: GraphShape, case: str, resume: bool) -> Edit:
    """Where the search starts: the whole graph, or with --resume the best edit minify.json saved for this case
    (as the earlier command left it: RunFacts.minified)."""
    saved = facts.minified
    if resume and saved is not None:
        if saved.get("case") == case:
            return Edit.from_dict(saved["best"])
    return shape.original()


def _finish(m: Minify, before: int, started: float) -> Repro:
    """The verified graph repro: its trials, seconds and the notes said on the way into the verdict's message."""
    repro = dataclasses.replace(
        m.latest,
        attempts=tuple(m.attempts),
        trials=m.runner.executed - before,
        seconds=round(time.monotonic() - started, 2),
        message="; ".join(x for x in (m.message(), *m.notes) if x),
    )
    m.emit(Event.MINIFIED, **repro.progress())
    return repro
