"""Zeller's delta debugging (ddmin): a 1-minimal subset that still satisfies a predicate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .bisect import chunks, flatten

T = TypeVar("T")

FirstOf = Callable[[list], int | None]


def sequential_first(test: Callable[[list], bool]) -> FirstOf:
    """Ask candidates one at a time; the index of the first that passes `test`."""
    return lambda candidates: next((i for i, c in enumerate(candidates) if test(c)), None)


def ddmin(
    items: Sequence[T], keeps_failing: Callable[[list[T]], bool], first_failing_of: FirstOf | None = None
) -> list[T]:
    """Reduce `items` to a 1-minimal list for which keeps_failing(list) is true.

    The caller guarantees keeps_failing(items) is true; it is not re-asked. Order is preserved.
    Subsets are tried before complements, so a single culprit costs about 2*log2(n) questions.
    `first_failing_of(candidates)` may answer several questions at once (in parallel, say); it must
    return the index of the first candidate, in order, that keeps failing.
    """
    first = first_failing_of or sequential_first(keeps_failing)
    current = list(items)
    n = 2
    while len(current) >= 2:
        parts = chunks(current, n)
        hit = first(parts)
        if hit is not None:
            current, n = parts[hit], 2
            continue
        # With two parts each complement is the other part, already asked.
        if len(parts) > 2:
            complements = [flatten(parts[:i] + parts[i + 1 :]) for i in range(len(parts))]
            hit = first(complements)
            if hit is not None:
                current, n = complements[hit], max(n - 1, 2)
                continue
        if n >= len(current):
            break
        n = min(len(current), 2 * n)
    return current
