"""One way to run a bisect's phases, for a script, a resumed run and a capture alike: the isolation, its repro
(when allowed), the evidence asked after it, the pack; the verdict built from their results, written after each."""

from __future__ import annotations

import dataclasses
import time

from reprokit.app import minify as minify_case
from reprokit.app.pack import packed
from reprokit.app.verdict_file import isolated, with_evidence, with_run
from reprokit.bisect.bisector import Bisector
from reprokit.data.budget import said
from reprokit.data.events import Emit, Event
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import NothingToIsolate


@dataclasses.dataclass(frozen=True)
class Budget:
    """--budget: its seconds, from the run's start (time.monotonic)."""

    seconds: float
    started: float

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline


@dataclasses.dataclass(frozen=True)
class Steps:
    """What a run does after the verdict: minify (its repro.py's header names `command`), pack, within a budget.
    capture: bisect --from-capture, whose verdict with no failing stage is packed and ends the run (exit 3)."""

    minify: bool = True
    pack: bool = True
    command: str = ""
    budget: Budget | None = None
    capture: bool = False


def run_phases(run_dir: RunDir, bisector: Bisector, runner, steps: Steps, emit: Emit) -> Verdict:
    """isolate, minify, the deferred evidence, pack: each phase's result into the verdict file. With a budget, the
    verdict is always finished; past its end nothing more is asked but a repro's own checks, and the run says what
    was not asked."""
    budget = steps.budget
    isolation = bisector.isolate()
    verdict = isolated(run_dir, isolation)
    # still packed: the capture and the failure are the report
    if steps.capture and not verdict.isolation.failing_stage:
        if steps.pack:
            verdict = packed(run_dir, verdict, emit, announce=False)
        raise NothingToIsolate(f"{isolation.message} (run folder: {run_dir.path})")
    # minify and the evidence ask under the bisector's policy (its limit, switches, tries) and the budget's end
    runner = bisector.use_policy(deadline=budget.deadline if budget else None)
    not_asked: list = []
    if steps.minify and verdict.isolation.failing_stage:
        reason = minify_case.refusal(verdict)
        if reason is None and budget and budget.spent():
            not_asked.append("minify")
        elif reason is None:  # the export path's failures too (#20): make_repro picks their minifier
            verdict = minify_case.minify_verdict(run_dir, verdict, runner=runner, emit=emit, command=steps.command)
        elif reason in (minify_case.SLOW_REASON, minify_case.MEMORY_REASON, minify_case.PLAIN_REASON):
            emit(Event.NOTE, text="not minified: " + reason)
    if isolation.deferred and budget and budget.spent():
        not_asked += list(isolation.deferred)
    elif isolation.deferred:
        case = None if steps.capture else graph_case(run_dir, verdict)
        verdict = with_evidence(run_dir, verdict, bisector.after_repro(isolation, case=case))
    if budget:
        verdict = with_run(run_dir, verdict, budget=_budget_record(budget, not_asked, runner.over_budget, emit))
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


def _budget_record(budget: Budget, not_asked: list, trials_not_run: int, emit: Emit) -> dict:
    """verdict.json's budget: spent or not, what was never asked, the search trials not run; said as a note."""
    spent = bool(not_asked or trials_not_run)
    if spent:
        parts = [
            f"not asked: {', '.join(not_asked)}" if not_asked else "",
            f"{trials_not_run} search trials not run, so repro.py (when written) is the smallest verified so "
            "far, not a minimal one"
            if trials_not_run
            else "",
        ]
        emit(Event.NOTE, text=f"the budget of {said(budget.seconds)} was spent: " + "; ".join(p for p in parts if p))
    return {"seconds": budget.seconds, "spent": spent, "not_asked": not_asked, "trials_not_run": trials_not_run}
