"""The stage ladder: the script under each stock stage, to name the first that fails the same way."""
from __future__ import annotations

from reprokit.data.records import Outcome, StageResult
from reprokit.data.stages import STAGES
from reprokit.bisect.session import Session


def run_ladder(s: Session, original: Outcome) -> list[StageResult]:
    """One result per stage after `none`; fills s.stage_outcomes (the baseline included)."""
    stages = list(STAGES[1:])
    s.stage_outcomes = {}
    specs = []
    for stage in stages:
        if stage == "inductor" and original.user_backend == "inductor":
            # The original run *is* the inductor stage: same backend, mode and options.
            specs.append(None)
        else:
            specs.append(s.spec(stage, f"stage-{stage}"))
    s.emit("ladder_start", stages=stages)
    results = s.runner.map([x for x in specs if x is not None], stop=None)
    it = iter(results)
    out = []
    for stage, spec in zip(stages, specs):
        outcome = original if spec is None else next(it)
        s.stage_outcomes[stage] = outcome
        same = s.fails_same(outcome)
        out.append(StageResult(stage=stage, kind=outcome.kind, summary=outcome.signature.short(),
                               seconds=outcome.seconds, same=same))
        s.emit("stage", stage=stage, outcome=outcome, same=same)
    s.stage_outcomes["none"] = s.runner(s.spec("none", "baseline-no-compile"))
    return out
