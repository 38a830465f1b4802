"""Run reduction passes repeatedly until none of them makes progress."""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

S = TypeVar("S")


def run_to_fixpoint(state: S, passes: Sequence[Callable[[S], S]], size: Callable[[S], int],
                    max_rounds: int = 20) -> S:
    """Apply each pass in turn; repeat the round while any pass shrank `size(state)`."""
    for _ in range(max_rounds):
        before = size(state)
        for p in passes:
            state = p(state)
        if size(state) >= before:
            break
    return state
