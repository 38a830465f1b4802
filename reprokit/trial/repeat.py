"""Trials of a flaky failure (issue #32): each question is asked until the failure shows or it has been asked
`tries` times. A trial counts as failing after one reproduction and as passing only after none in `tries` runs
(shrinkray's rule), with `tries` chosen from the original's measured rate so that a chance pass is rare."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable

from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.trial.runner import BUDGET_SPENT

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


class UntilItFails:
    """A Runner whose every trial is asked up to `tries` times, until it fails the target's way; the rest of the
    Runner (its journal, limits, environment) is the wrapped one's."""

    def __init__(self, runner, target: Signature, tries: int):
        object.__setattr__(self, "_inner", runner)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "tries", tries)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __setattr__(self, name, value):  # runner.env = ..., runner.timeout = ...: the wrapped runner's
        setattr(self._inner, name, value)

    def _shows(self, outcome: Outcome | None) -> bool:
        return outcome is None or outcome is BUDGET_SPENT or self.target.matches(outcome.signature)

    def __call__(self, spec: TrialSpec, *args, **kwargs) -> Outcome:
        outs = [self._inner(spec, *args, **kwargs)]
        for i in range(1, self.tries if _a_question(spec) else 1):
            if self._shows(outs[-1]):
                break
            outs.append(self._inner(_again(spec, i), *args, **kwargs))
        answer = _answer(outs, self._shows)
        assert answer is not None  # one of the wrapped runner's outcomes, none of them None
        return answer

    def map(
        self, specs: Iterable[TrialSpec], stop: Callable[[int, Outcome], bool] | None = None, limit: float | None = None
    ) -> list:
        """The first round as the wrapped runner asks it; then each that has not shown the failure, again, all at
        once, until it does or its tries are spent."""
        specs = list(specs)
        runs = [[o] for o in self._inner.map(specs, stop=stop, limit=limit)]
        for i in range(1, self.tries):
            again = [j for j, r in enumerate(runs) if _a_question(specs[j]) and not self._shows(r[-1])]
            if not again:
                break
            for j, o in zip(again, self._inner.map([_again(specs[j], i) for j in again], limit=limit)):
                if o is not None:
                    runs[j].append(o)
        return [_answer(r, self._shows) for r in runs]


def _a_question(spec: TrialSpec) -> bool:
    """Whether the trial asks whether the failure shows: not one that writes a repro's parts or captures a graph."""
    return spec.mode != "repro" and spec.capture is None


def _answer(outs: list, shows: Callable) -> Outcome | None:
    """The run that showed the failure; else the first that failed some other way (a check of its own that
    tripped, a different error); else the last pass."""
    shown = [o for o in outs if shows(o)]
    if shown:
        return shown[0]
    return next((o for o in outs if o.failed), outs[-1])


def _again(spec: TrialSpec, i: int) -> TrialSpec:
    return dataclasses.replace(spec, attempt=spec.attempt + ATTEMPT_STRIDE * i)
