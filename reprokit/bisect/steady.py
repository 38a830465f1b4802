"""Runs that fail some other way than the original (the no-compile baseline, a stage of the ladder): asked again a
bounded number of times, so that one flaky run (a hang at gloo's teardown, a stray crash) neither stops the
bisect nor stands in for the failure."""

from __future__ import annotations

from collections.abc import Callable

from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.signature import Signature
from reprokit.data.stages import CROSSREF

# Runs after the first that failed another way: a flaky failure rarely survives three runs; a steady one is told
# by the second run failing exactly as the first (then no third is spent).
RERUNS = 2


def more_runs(s, label: str, first_attempt: int, n: int, **kw) -> list:
    """n more runs of the script as written, side by side (attempts from `first_attempt`, so none is answered from
    the journal); those that answered."""
    return [
        x
        for x in s.runner.map([s.spec("user", label, attempt=first_attempt + i, **kw) for i in range(n)])
        if x is not None
    ]


def count_same(target: Signature | None, runs: list) -> int:
    """How many of the runs failed the target's way."""
    return sum(1 for x in runs if x is not None and target is not None and target.matches(x.signature))


def differs(target: Signature | None, outcome: Outcome | None) -> bool:
    """The run failed, and not the way the original did (another signature, or a hang where it raised)."""
    return outcome is not None and outcome.failed and not (target is not None and target.matches(outcome.signature))


def settle(
    run: Callable[[TrialSpec], Outcome], spec: Callable[[int], TrialSpec], target: Signature | None, first: Outcome
) -> tuple[Outcome, list]:
    """(the outcome that counts, every outcome) once `first`, which failed another way, is asked again: up to
    RERUNS more runs, ending at the first that passes or fails the original's way, or that fails exactly as the
    run before it (a steady failure of its own)."""
    runs = [first]
    for attempt in range(1, RERUNS + 1):
        again = run(spec(attempt))
        runs.append(again)
        if not differs(target, again) or again.signature.matches(runs[-2].signature):
            break
    return runs[-1], runs


def describe(what: str, runs: list, target: Signature | None) -> str:
    """One line on a run that failed another way: flaky (it came right) or broken that way (it stayed)."""
    other = [r for r in runs if differs(target, r)]
    how = _how(other[0])
    if not differs(target, runs[-1]):
        ended = "passed" if runs[-1].kind == OutcomeKind.PASS else "failed the original's way"
        return f"{what} is flaky: it {how} in {len(other)} of {len(runs)} runs, then {ended}; that is not the failure"
    return (
        f"{what} is broken another way: it {how} in all {len(runs)} runs; that is not the failure, the bisect went on"
    )


def _how(outcome: Outcome) -> str:
    if outcome.kind == OutcomeKind.HANG:
        return f"hung (cut at {outcome.seconds:.0f} s)"
    return f"failed with {outcome.signature.short()[:160]}"


def contradicting(ladder: list, user_stage: str | None) -> str | None:
    """The stage whose pass contradicts the original's failure, or None when the ladder holds together: the stage
    of the script's own backend (the original failed with it), or a stage after the first failing one and up to
    the script's own (a bug a stage brings in stays in the stages built on it). The crossref check is left out."""
    rows = [r for r in ladder if r.stage != CROSSREF]
    stages = [r.stage for r in rows]
    if user_stage in stages and rows[stages.index(user_stage)].kind == OutcomeKind.PASS:
        return user_stage
    first = next((i for i, r in enumerate(rows) if r.same), None)
    if first is None or user_stage not in stages:
        return None
    return next((r.stage for r in rows[first + 1 : stages.index(user_stage) + 1] if r.kind == OutcomeKind.PASS), None)
