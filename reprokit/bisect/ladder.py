"""The stage ladder: the script under each stock stage, to name the first that fails the same way."""

from __future__ import annotations

import os
import re

from reprokit.bisect.session import Session
from reprokit.bisect.steady import describe, differs, settle
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, StageResult, TrialSpec
from reprokit.data.stages import CROSSREF, STAGES

# An operator outside torch's own namespaces, as Dynamo writes it into a graph's code: the crossref stage checks
# only these (torch's default for it), so without one it would repeat the stage before it.
# torch's own collectives (_c10d_functional) are no custom op: their fake kernels are checked upstream, and
# crossref flags wait_tensor's aliasing as a mismatch.
CUSTOM_OP = re.compile(r"\btorch\.ops\.(?!aten\.|prims\.|prim\.|higher_order\.|_?c10d_functional\.)(\w+\.\w+)")

# What the crossref check raises when a fake kernel disagrees with its real kernel.
META_MISMATCH = "MetadataMismatchError"


def ladder_stages(s: Session, original: Outcome) -> list[str]:
    """The stages after `none` worth asking: only Dynamo's when it hung before any graph reached a backend (every
    later stage would hang the same way, a timeout each), and crossref only when a graph calls a custom op and a
    failure is chased (a checking mode's speed says nothing)."""
    if dynamo_hang(original):
        return ["eager"]
    crossref = s.opts.kind == "failure" and bool(custom_ops(s, original))
    return [st for st in STAGES[1:] if st != CROSSREF or crossref]


def dynamo_hang(original: Outcome) -> bool:
    """The compiled run hung after torch.compile was called and before any graph reached the backend."""
    return original.kind == OutcomeKind.HANG and original.compiled and original.graphs == 0


def custom_ops(s: Session, original: Outcome) -> list[str]:
    """Custom operators ("ns.op") the graphs Dynamo made call, read from the graph code trials saved."""
    found: set = set()
    for outcome in (original, s.stage_outcomes.get("eager")):
        folder = os.path.join(outcome.trial_dir, "graphs") if outcome is not None and outcome.trial_dir else ""
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            with open(os.path.join(folder, name), errors="replace") as f:
                found.update(CUSTOM_OP.findall(f.read()))
    return sorted(found)


def run_ladder(s: Session, original: Outcome) -> list[StageResult]:
    """One result per stage asked after `none`; fills s.stage_outcomes (the baseline included)."""
    s.stage_outcomes = {}
    s.stage_outcomes["eager"] = s.runner(s.spec("eager", "stage-eager"))  # answered by the first round
    stages = ladder_stages(s, original)
    specs: list[TrialSpec | None] = []
    for stage in stages:
        if stage == "inductor" and original.user_backend == "inductor":
            # The original run *is* the inductor stage: same backend, mode and options.
            specs.append(None)
        else:
            specs.append(s.spec(stage, f"stage-{stage}"))
    s.emit(Event.LADDER_START, stages=stages)
    runs = sum(1 for x in specs if x is not None)
    # The cost said before it is paid: a long job's user sees what the ladder will take.
    s.emit(
        Event.NOTE,
        text=f"one run of the script took {original.seconds:.1f} s; the stages run it {runs} more "
        f"time{'s' * (runs != 1)}, side by side",
    )
    results = s.runner.map([x for x in specs if x is not None], stop=None)
    it = iter(results)
    outcomes = [original if spec is None else next(it) for spec in specs]
    first_same = next(
        (i for i, x in enumerate(outcomes) if s.target is not None and s.target.matches(x.signature)), len(outcomes)
    )
    out = []
    for i, (stage, spec) in enumerate(zip(stages, specs)):
        outcome = outcomes[i]
        if i < first_same and spec is not None and differs(s.target, outcome):
            outcome = _settled(s, stage, outcome)  # a stage before the failing one that failed another way
        out.append(record_stage(s, stage, outcome))
    s.stage_outcomes["none"] = s.baseline or s.runner(s.spec("none", "baseline-no-compile"))
    return out


def record_stage(s: Session, stage: str, outcome: Outcome, same: bool | None = None) -> StageResult:
    """One rung of a ladder: its outcome kept for the later questions, said as it comes, and its row. same: whether
    it fails the original's way (by default the session's rule)."""
    s.stage_outcomes[stage] = outcome
    same = s.fails_same(outcome) if same is None else same
    s.emit(Event.STAGE, stage=stage, outcome=outcome, same=same)
    return StageResult(
        stage=stage, kind=outcome.kind, summary=outcome.signature.short(), seconds=outcome.seconds, same=same
    )


def _settled(s: Session, stage: str, outcome: Outcome) -> Outcome:
    """A stage that failed another way than the original, asked again (bisect/steady.py); noted when it came
    right or stayed broken."""
    counted, runs = settle(s.runner, lambda k: s.spec(stage, f"stage-{stage}", attempt=k), s.target, outcome)
    if not differs(s.target, counted) or counted.kind == OutcomeKind.HANG:  # flaky, or hung each time: say so
        s.unsteady.append(describe(f"stage {stage}", runs, s.target))
        s.emit(Event.NOTE, text=s.unsteady[-1])
    return counted


def meta_mismatch(s: Session, ladder: list[StageResult]) -> StageResult | None:
    """The crossref stage's result when it is the first failure of the ladder and its failure is the check's own
    (a fake kernel that disagrees with the real one): that is a finding even though the compiled run failed
    otherwise, since inductor plans its buffers from fake kernels."""
    for r in ladder:
        if r.stage == CROSSREF and r.kind == OutcomeKind.EXCEPTION:
            sig = s.stage_outcomes[CROSSREF].signature
            return r if sig.exc_type == META_MISMATCH else None
        if r.kind != OutcomeKind.PASS:
            return None
    return None


def previous_stage(s: Session, stage: str) -> str:
    """The stage before `stage` that the ladder asked (crossref is asked only for graphs with custom ops)."""
    before = [st for st in STAGES[: STAGES.index(stage)] if st in s.stage_outcomes]
    return before[-1]
