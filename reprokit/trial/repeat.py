"""Trials of a flaky failure (issue #32): each question is asked until the failure shows or it has been asked
`tries` times (the Runner's policy, trial/policy.py).

The rule, first reproduction wins: a question fails at its first run that fails the target's way, and passes only
after `tries` runs with none, `tries` chosen from the original's measured rate so that a question that does fail
passes all of them with a chance of at most MISS (`tries_for`). One reproduction proves the failure is there; only
a pass can be luck, so only passes are bought with more runs. It is not shrinkray's rule, which accepts at the 4th
reproduction and rejects at 0 in 10 (a confidence both ways, at several times the trials)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from reprokit.data.kinds import OutcomeKind, TrialKind
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.trial.policy import TrialPolicy

MAX_TRIES = 8  # a rare failure (below about 30%) is not bisected run by run: past this it costs too much
MISS = 0.05  # the chance a failing question passes all its tries
ATTEMPT_STRIDE = 1000  # the re-asks' attempt numbers, apart from the attempts a search gives itself


def tries_for(rate: float) -> int:
    """Runs after which a question that has not failed counts as passing: the least n with (1 - rate)^n <= MISS."""
    if rate >= 1.0:
        return 1
    if rate <= 0.0:
        return MAX_TRIES
    return max(1, min(MAX_TRIES, math.ceil(math.log(MISS) / math.log(1.0 - rate))))


def too_rare(rate: float) -> bool:
    """Whether a failure this rare would pass all of MAX_TRIES runs more often than MISS: not bisected run by run."""
    return rate <= 0.0 or (1.0 - rate) ** MAX_TRIES > MISS


def _shows(target: Signature | None) -> Callable[[Outcome | None], bool]:
    """Whether an answer ends the asking: the failure shown, or no answer to ask again (not run, the budget)."""

    def shows(outcome: Outcome | None) -> bool:
        if outcome is None or outcome.kind == OutcomeKind.BUDGET_SPENT:
            return True
        return target is not None and target.matches(outcome.signature)

    return shows


def ask_until_it_fails(ask: Callable[[TrialSpec], Outcome], spec: TrialSpec, policy: TrialPolicy) -> Outcome:
    """spec asked by ask() up to policy.tries times, until it fails the target's way."""
    shows = _shows(policy.target)
    outs = [ask(spec)]
    for i in range(1, policy.tries if _a_question(spec) else 1):
        if shows(outs[-1]):
            break
        outs.append(ask(_again(spec, i)))
    answer = _answer(outs, shows)
    assert answer is not None  # one of ask()'s outcomes, none of them None
    return answer


def map_until_it_fails(
    run_round: Callable[[list, Callable | None], list], specs: list, stop: Callable | None, policy: TrialPolicy
) -> list:
    """The first round as run_round(specs, stop) asks it; then each that has not shown the failure, again, all at
    once, until it does or its tries are spent."""
    shows = _shows(policy.target)
    runs = [[o] for o in run_round(specs, stop)]
    for i in range(1, policy.tries):
        again = [j for j, r in enumerate(runs) if _a_question(specs[j]) and not shows(r[-1])]
        if not again:
            break
        for j, o in zip(again, run_round([_again(specs[j], i) for j in again], None)):
            if o is not None:
                runs[j].append(o)
    return [_answer(r, shows) for r in runs]


def _a_question(spec: TrialSpec) -> bool:
    """Whether the trial asks whether the failure shows: not one that writes a repro's parts or saves a graph."""
    return spec.mode != TrialKind.REPRO and spec.save_graph is None


def _answer(outs: list, shows: Callable) -> Outcome | None:
    """The run that showed the failure; else the first that failed some other way (a check of its own that
    tripped, a different error); else the last pass."""
    shown = [o for o in outs if shows(o)]
    if shown:
        return shown[0]
    return next((o for o in outs if o.failed), outs[-1])


def _again(spec: TrialSpec, i: int) -> TrialSpec:
    return dataclasses.replace(spec, attempt=spec.attempt + ATTEMPT_STRIDE * i)
