"""One way to run a bisect's phases, for a script, a resumed run and a capture alike, on the Runner the command
opened (app/runners): the isolation, its repro (when allowed), the evidence asked after it, each once and in that
order; the verdict built from their results, then the pack."""

from __future__ import annotations

import dataclasses
import time

from reprokit.app import minify as minify_case
from reprokit.app.pack import packed
from reprokit.app.verdict_file import finished, isolated
from reprokit.bisect.bisector import Bisector
from reprokit.data.budget import Budget, spent_note
from reprokit.data.events import Emit, Event
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import NothingToIsolate
from reprokit.minify.plan import COSTLY_EVIDENCE, TARGET, evidence_in_time, whole_run_plan


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
    facts: RunFacts,
    bisector: Bisector,
    runner,
    steps: Steps,
    emit: Emit,
    budget: Budget | None = None,
    started: float | None = None,
) -> Verdict:
    """isolate, minify, the deferred evidence, each once and in that order, on the runner the caller opened (facts:
    what the caller recorded in run.json, handed down rather than read back); the verdict built from their results
    and written (after the isolation too, for `reprokit minify RUN_DIR`), then packed. With a budget, the verdict is
    always finished; past its end nothing more is asked but a repro's own checks, and the run says what was not
    asked. Without one, the repro phases' shares and the evidence's search of the config flips' smallest set keep to
    the time plan of a run begun at `started`."""
    isolation = bisector.isolate()
    isolated(run_dir, isolation)
    # a capture whose failure no stage shows is still packed (the capture and the failure are the report)
    ends = steps.capture and not isolation.failing_stage
    plan = whole_run_plan(started, budget)
    # minify and the evidence ask under the bisector's policy (its limit, switches, tries) and the budget's end
    if not ends:
        runner = bisector.use_policy(deadline=budget.deadline if budget else None, plan=plan)
    spent = bool(budget and budget.exhausted())
    minified = minify_case.minify_phase(run_dir, isolation, facts, runner, emit, steps.minify, spent, steps.command)
    not_asked = ["minify"] if minified.unasked else []
    evidence, run = None, dict(minified.run)
    if not ends and isolation.deferred and budget and budget.exhausted():
        not_asked += [name for name in isolation.deferred if name != "config_set"]  # a part of "configs"
    elif not ends and isolation.deferred:
        one_run = max((row.get("seconds") or 0.0 for row in isolation.ladder), default=0.0)
        asked, late = evidence_in_time(isolation.deferred, plan, time.monotonic(), one_run)
        asking = dataclasses.replace(isolation, deferred=asked)
        evidence = bisector.after_repro(asking, case=None if steps.capture else minified.case)
        late = tuple(name for name in late if name not in evidence.asked)  # the first round may have settled it
        if late:
            run["time_plan"] = {"seconds": TARGET, "not_asked": list(late)}
            emit(Event.NOTE, text=time_plan_note(late))
    if budget and not ends:
        run["budget"] = budget.record(not_asked, runner.over_budget)
        note = spent_note(run["budget"])
        if note:
            emit(Event.NOTE, text=note)
    verdict = finished(run_dir, isolation, minified.repro, evidence, **run)
    if steps.pack:
        verdict = packed(run_dir, verdict, emit, announce=not ends)
    if ends:
        raise NothingToIsolate(f"{isolation.message} (run folder: {run_dir.path})")
    return verdict


def time_plan_note(late: tuple) -> str:
    """What a run past its time target left unasked, and how to ask it."""
    left = "; ".join(COSTLY_EVIDENCE[name] for name in late)
    return f"the run would end past its {TARGET / 60:g} minutes, so not searched: {left} (--budget 20m searches it)"
