"""One way to run a bisect's phases, for a script, a resumed run and a capture alike: the isolation, its repro
(when allowed), the evidence asked after it, the pack; the verdict built from their results, written after each."""

from __future__ import annotations

import dataclasses

from reprokit.app import minify as minify_case
from reprokit.app.pack import packed
from reprokit.app.verdict_file import isolated, with_evidence, with_run
from reprokit.bisect.bisector import Bisector
from reprokit.data.budget import Budget, spent_note
from reprokit.data.events import Emit, Event
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import NothingToIsolate
from reprokit.minify.plan import whole_run_plan


@dataclasses.dataclass(frozen=True)
class Steps:
    """What a run does after the verdict: minify (its repro.py's header names `command`), pack. capture: bisect
    --from-capture, whose verdict with no failing stage is packed and ends the run (exit 3)."""

    minify: bool = True
    pack: bool = True
    command: str = ""
    capture: bool = False


def run_phases(
    run_dir: RunDir,
    bisector: Bisector,
    runner,
    steps: Steps,
    emit: Emit,
    budget: Budget | None = None,
    started: float | None = None,
) -> Verdict:
    """isolate, minify, the deferred evidence, pack: each phase's result into the verdict file. With a budget, the
    verdict is always finished; past its end nothing more is asked but a repro's own checks, and the run says what
    was not asked. Without one, the repro phases' shares keep to the time plan of a run begun at `started`."""
    isolation = bisector.isolate()
    verdict = isolated(run_dir, isolation)
    # still packed: the capture and the failure are the report
    if steps.capture and not verdict.isolation.failing_stage:
        if steps.pack:
            verdict = packed(run_dir, verdict, emit, announce=False)
        raise NothingToIsolate(f"{isolation.message} (run folder: {run_dir.path})")
    # minify and the evidence ask under the bisector's policy (its limit, switches, tries) and the budget's end
    deadline = budget.deadline if budget else None
    runner = bisector.use_policy(deadline=deadline, plan=whole_run_plan(started, budget))
    not_asked: list = []
    if steps.minify and verdict.isolation.failing_stage:
        reason = minify_case.refusal(verdict)
        if reason is None and budget and budget.exhausted():
            not_asked.append("minify")
        elif reason is None:  # the export path's failures too (#20): make_repro picks their minifier
            verdict = minify_case.minify_verdict(run_dir, verdict, runner=runner, emit=emit, command=steps.command)
        elif reason in (minify_case.SLOW_REASON, minify_case.MEMORY_REASON, minify_case.PLAIN_REASON):
            emit(Event.NOTE, text="not minified: " + reason)
    if isolation.deferred and budget and budget.exhausted():
        not_asked += list(isolation.deferred)
    elif isolation.deferred:
        case = None if steps.capture else graph_case(run_dir, verdict)
        verdict = with_evidence(run_dir, verdict, bisector.after_repro(isolation, case=case))
    if budget:
        record = budget.record(not_asked, runner.over_budget)
        verdict = with_run(run_dir, verdict, budget=record)
        note = spent_note(record)
        if note:
            emit(Event.NOTE, text=note)
    if steps.pack:
        verdict = packed(run_dir, verdict, emit)
    return verdict


def graph_case(run_dir: RunDir, verdict: Verdict) -> str | None:
    """The folder minify captured the failing graph in (the first diverging node is asked of it), if any."""
    closer = (verdict.run.more_accurate or {}).get("case")
    if closer:
        return closer
    if run_dir.exists("minify.json"):
        return run_dir.read_json("minify.json").get("case")
    return verdict.isolation.graph_case
