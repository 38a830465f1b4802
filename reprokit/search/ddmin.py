"""Zeller's delta debugging (ddmin): a 1-minimal subset that still satisfies a predicate."""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from .bisect import chunks, flatten

T = TypeVar("T")


def ddmin(items: Sequence[T], keeps_failing: Callable[[list[T]], bool]) -> list[T]:
    """Reduce `items` to a 1-minimal list for which keeps_failing(list) is true.

    The caller guarantees keeps_failing(items) is true; it is not re-asked. Order is preserved.
    Subsets are tried before complements, so a single culprit costs about 2*log2(n) questions.
    """
    current = list(items)
    n = 2
    while len(current) >= 2:
        parts = chunks(current, n)
        progress = False
        for part in parts:
            if keeps_failing(part):
                current, n, progress = part, 2, True
                break
        # With two parts each complement is the other part, already asked.
        if not progress and len(parts) > 2:
            for i in range(len(parts)):
                complement = flatten(parts[:i] + parts[i + 1:])
                if keeps_failing(complement):
                    current, n, progress = complement, max(n - 1, 2), True
                    break
        if not progress:
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    return current
