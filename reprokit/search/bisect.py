"""Ordered searches: the first failing item of a ladder, and a pass/fail boundary on integers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


def first_failing(items: Sequence[T], fails: Callable[[T], bool]) -> int | None:
    """Index of the first item for which `fails` is true, testing in order; None if none fails."""
    for i, item in enumerate(items):
        if fails(item):
            return i
    return None


# With `hi` given the answer is always a number (hi itself at worst).
@overload
def find_boundary(
    fails: Callable[[int], bool], lo: int, hi: int, fails_many: Callable[[list], list] | None = None, width: int = 1
) -> int: ...
@overload
def find_boundary(
    fails: Callable[[int], bool],
    lo: int,
    hi: None = None,
    fails_many: Callable[[list], list] | None = None,
    width: int = 1,
) -> int | None: ...
def find_boundary(
    fails: Callable[[int], bool],
    lo: int,
    hi: int | None = None,
    fails_many: Callable[[list], list] | None = None,
    width: int = 1,
) -> int | None:
    """Smallest n > lo with fails(n), assuming fails is monotone and fails(lo) is false.

    With `hi` known to fail, search in (lo, hi]. Without it, probe lo+1, lo+2, lo+4, ... (exponential
    search) until a failure bounds the range; gives up (None) past 2**40. With `fails_many` and
    width k > 1, each round asks k evenly spaced points at once (a (k+1)-ary search).
    """
    ask = fails_many or (lambda points: [fails(p) for p in points])
    if hi is None:
        step = 1
        while True:
            probe = lo + step
            if fails(probe):
                hi = probe
                break
            lo = probe
            step *= 2
            if step > 2**40:
                return None
    while hi - lo > 1:
        k = max(1, min(width, hi - lo - 1))
        points = sorted({lo + (hi - lo) * (i + 1) // (k + 1) for i in range(k)} - {lo, hi})
        answers = ask(points)
        for point, failed in zip(points, answers):
            if failed:
                hi = point
                break
            lo = point
    return hi


def find_boundary_guessing(
    fails_many: Callable[[list], list], lo: int, hi: int, guesses: Iterable[int], width: int = 1
) -> int | None:
    """find_boundary in (lo, hi], asking likely boundaries first.

    The guesses go in order, `width` at a time, and stop at the first round with a failure: it bounds the
    range from above and the last passing guess before it from below (guesses after it would be wasted). Then
    the point just before that failing guess: when it passes, the guess was the boundary (two rounds in all,
    whatever the range). Wrong guesses still narrow the range the usual search finishes.
    """
    points = sorted({g for g in guesses if lo < g < hi})
    if points:
        for start in range(0, len(points), max(1, width)):
            batch = points[start : start + max(1, width)]
            failed_at = next((p for p, failed in zip(batch, fails_many(batch)) if failed), None)
            lo = max([lo] + [p for p in batch if failed_at is None or p < failed_at])
            if failed_at is not None:
                hi = failed_at
                break
        if hi - 1 > lo:
            if fails_many([hi - 1])[0]:
                hi -= 1
            else:
                lo = hi - 1
    return find_boundary(lambda p: fails_many([p])[0], lo, hi, fails_many=fails_many, width=width)


def chunks(items: Sequence[T], n: int) -> list[list[T]]:
    """Split items into n nearly equal contiguous chunks (none empty)."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return out


def flatten(groups: Iterable[Sequence[T]]) -> list[T]:
    return [x for g in groups for x in g]
