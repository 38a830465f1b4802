"""Run reduction passes repeatedly until none of them makes progress."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .problem import Problem

S = TypeVar("S")


def run_to_fixpoint(state: S, passes: Sequence[Callable[[S], S]], size: Callable[[S], int], max_rounds: int = 20) -> S:
    """Apply each pass in turn; repeat the round while any pass shrank `size(state)`."""
    for _ in range(max_rounds):
        before = size(state)
        for p in passes:
            state = p(state)
        if size(state) >= before:
            break
    return state


@dataclass(frozen=True)
class Pass(Generic[S]):
    """A named reducer: from the state it is given, it proposes candidates to the problem and returns the state
    the next pass starts from (a candidate the oracle said fails the same way, or the state it was given)."""

    name: str
    reduce: Callable[[Problem[S], S], S]


def run_passes(problem: Problem[S], passes: Sequence[Pass[S]], start: S | None = None, max_rounds: int = 20) -> S:
    """Run the passes over `problem` from `start` (its best by default) until a round no longer shrinks the state."""

    def named(p: Pass[S]) -> Callable[[S], S]:
        def step(state: S) -> S:
            problem.current_pass = p.name
            try:
                return p.reduce(problem, state)
            finally:
                problem.current_pass = None

        return step

    return run_to_fixpoint(
        problem.best if start is None else start, [named(p) for p in passes], size=problem.size, max_rounds=max_rounds
    )
