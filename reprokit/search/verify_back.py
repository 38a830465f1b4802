"""The smallest candidate that holds up when checked again: a reduction's answers may not (a flaky failure whose
rate fell as it was cut, or a cut that failed in a trial but not in a fresh interpreter), so the check walks back
through what the reduction accepted, toward the initial candidate, which was known to fail before any cut."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def walk_back_order(accepted: Sequence[T], most: int = 3) -> list[int]:
    """Indexes into `accepted` (largest first, best last) to check, at most `most` of them: the best, one halfway
    back, then the initial candidate."""
    order: list[int] = []
    for i in (len(accepted) - 1, (len(accepted) - 1) // 2, 0):
        if i >= 0 and i not in order:
            order.append(i)
    return order[:most]


def verified_back(accepted: Sequence[T], verify: Callable[[T], bool], most: int = 3) -> int | None:
    """Index of the first candidate, in walk_back_order, that `verify` holds for; None when none of them does."""
    return next((i for i in walk_back_order(accepted, most) if verify(accepted[i])), None)
