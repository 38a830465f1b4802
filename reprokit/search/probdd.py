"""Probabilistic delta debugging (Wang et al., "Probabilistic Delta Debugging", FSE 2021): ddmin's answer with
fewer questions, by learning from each refusal which items tend to be needed.

Each item carries the probability that the failure needs it. Every question removes the set of least likely
items whose expected gain (items removed, times the chance that none is needed) is largest. A removal that keeps
the failure drops those items for good; a refused one raises each of their probabilities by Bayes' rule, so a set
refused once is split on the next question, and an item refused alone is needed (probability 1). It stops when
every item left is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .ddmin import FirstOf, sequential_first

T = TypeVar("T")

# The prior chance that one item is needed: the paper's 0.1 (a script's statements are mostly not).
PRIOR = 0.1


def probdd(
    items: Sequence[T],
    keeps_failing: Callable[[list[T]], bool],
    first_failing_of: FirstOf | None = None,
    width: int = 1,
    prior: float = PRIOR,
) -> list[T]:
    """A list of `items`, in order, for which keeps_failing still holds and from which no single item asked alone
    could be removed when it was asked.

    As for ddmin: the caller guarantees keeps_failing(items); `first_failing_of(candidates)` answers several
    questions at once and returns the index of the first candidate, in order, that keeps failing. With width k, each
    round asks up to k disjoint removals (the best set, then the best of what is left, ...), for k trials side by
    side; a removal asked after the first that keeps failing teaches nothing.
    """
    first = first_failing_of or sequential_first(keeps_failing)
    current = list(range(len(items)))  # indexes, so equal items keep their own probabilities
    p = [prior] * len(items)
    while True:
        sets = removal_sets(current, p, max(1, width))
        if not sets:
            return [items[i] for i in current]
        candidates = [[items[i] for i in current if i not in s] for s in sets]
        hit = first(candidates)
        for refused in sets[: len(sets) if hit is None else hit]:
            learn_refused(p, refused)
        if hit is not None:
            current = [i for i in current if i not in sets[hit]]


def removal_sets(current: list[int], p: list[float], width: int) -> list[set[int]]:
    """Up to `width` disjoint sets to remove, each the prefix of the remaining least-likely items with the largest
    expected gain; none once every item left is needed."""
    # Least likely first; among equals, the later items first (a script's last statements use the earlier ones).
    order = sorted((i for i in current if p[i] < 1.0), key=lambda i: (p[i], -i))
    sets: list[set[int]] = []
    while order and len(sets) < width:
        size = best_prefix(order, p)
        sets.append(set(order[:size]))
        order = order[size:]
    return sets


def best_prefix(order: list[int], p: list[float]) -> int:
    """Length of the prefix of `order` that maximises len * P(none of it is needed) (at least 1)."""
    best, best_gain, none_needed = 1, 0.0, 1.0
    for k, i in enumerate(order, start=1):
        none_needed *= 1.0 - p[i]
        gain = k * none_needed
        if gain > best_gain:
            best, best_gain = k, gain
        else:
            break  # the gain only falls from here on: each next factor (k+1)/k * (1-p) is smaller than the last
    return best


def learn_refused(p: list[float], refused: set[int]) -> None:
    """A removal of `refused` lost the failure: at least one of them is needed (Bayes' rule on each)."""
    if len(refused) == 1:
        p[next(iter(refused))] = 1.0
        return
    some_needed = 1.0
    for i in refused:
        some_needed *= 1.0 - p[i]
    some_needed = 1.0 - some_needed
    for i in refused:
        p[i] = min(1.0, p[i] / some_needed) if some_needed > 0 else 1.0
