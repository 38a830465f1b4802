"""Run reduction passes repeatedly until none of them makes progress."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .problem import Problem

S = TypeVar("S")


@dataclass(frozen=True)
class Pass(Generic[S]):
    """A named reducer: from the state it is given, it proposes candidates to the problem and returns the state
    the next pass starts from (a candidate the oracle said fails the same way, or the state it was given).
    A `detour` may return a state larger than the best (a helper inlined into its calls), for a later pass to cut
    what it left unused."""

    name: str
    reduce: Callable[[Problem[S], S], S]
    detour: bool = False


def run_passes(problem: Problem[S], passes: Sequence[Pass[S]], start: S | None = None, max_rounds: int = 20) -> S:
    """Run the passes over `problem` from `start` (its best by default) until a round no longer shrinks the state.

    A round that ends on a detour's larger text, the best not beaten, starts the next round from the best with the
    detours left out: the passes after the detour had worked on its text alone (#197896's repro kept a statement
    the detour's text had shown it could lose, 31 lines where the rounds stopped)."""

    def step(p: Pass[S], state: S) -> S:
        problem.current_pass = p.name
        try:
            return p.reduce(problem, state)
        finally:
            problem.current_pass = None

    state = problem.best if start is None else start
    detours = True
    for _ in range(max_rounds):
        best_before, before = problem.size(problem.best), problem.size(state)
        for p in passes:
            if detours or not p.detour:
                state = step(p, state)
        shrank = problem.size(problem.best) < best_before or problem.size(state) < before
        if problem.size(state) > problem.size(problem.best):
            state, shrank = problem.best, problem.size(problem.best) < best_before
            if not shrank and detours:
                detours = False
                continue
        if not shrank:
            break
        detours = True
    return state
