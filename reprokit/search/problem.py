"""A reduction problem: the smallest candidate known to fail the same way, and the one rule that replaces it.

As in shrinkray, acceptance lives here and nowhere else: reducers only propose candidates. The oracle that says
whether a candidate fails the same way is injected, so this module knows nothing of trials, graphs or sources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from .learned import EditMemory

T = TypeVar("T")

FirstFailing = Callable[[Sequence[T]], int | None]
FailingMask = Callable[[Sequence[T]], list]


class Problem(Generic[T]):
    """Holds `best`, the smallest candidate that fails the same way, and asks the oracle about others.

    fails_same(candidate) -> bool is the oracle. The optional batch forms answer several candidates at once
    (in parallel, say): first_failing(candidates) -> the index of the first, in order, that fails the same way
    (or None); failing_mask(candidates) -> one answer per candidate. on_improve(candidate) is called each time
    a candidate becomes the new best, so the caller can persist it. width: how many candidates the batch forms run
    side by side.
    """

    def __init__(
        self,
        initial: T,
        fails_same: Callable[[T], bool],
        size: Callable[[T], int],
        first_failing: FirstFailing | None = None,
        failing_mask: FailingMask | None = None,
        on_improve: Callable[[T], None] | None = None,
        width: int = 1,
    ):
        self.best = initial
        self.width = width  # candidates the batch forms answer side by side: a search may ask that many at once
        self.size = size
        self._fails_same = fails_same
        self._first_failing = first_failing
        self._failing_mask = failing_mask
        self._on_improve = on_improve
        self.current_pass: str | None = None  # set by run_passes, so improvements can name their pass
        self.improvements: list[tuple[str | None, int]] = []  # (pass name, new size), in order
        self.edits = EditMemory()  # what the oracle refused, for sweeps of proposals (search/learned.py)
        self.accepted: list[T] = [initial]  # every best so far, largest first: the initial one, then each improvement

    # -- asking ---------------------------------------------------------------------------------
    def test(self, candidate: T) -> bool:
        """Does the candidate fail the same way? If it does and is strictly smaller, it becomes the best."""
        if not self._fails_same(candidate):
            return False
        self._accept(candidate)
        return True

    def consider(self, candidate: T) -> bool:
        """True when the candidate became the new best: strictly smaller, and failing the same way.

        A candidate that is not smaller is refused without asking the oracle.
        """
        return self.size(candidate) < self.size(self.best) and self.test(candidate)

    def first_failing(self, candidates: Sequence[T]) -> int | None:
        """Index of the first candidate that fails the same way (considered for best), or None."""
        if self._first_failing is None:
            return next((i for i, c in enumerate(candidates) if self.test(c)), None)
        hit = self._first_failing(candidates)
        if hit is not None:
            self._accept(candidates[hit])
        return hit

    def failing_mask(self, candidates: Sequence[T]) -> list:
        """One answer per candidate, all asked (at once when the oracle has a batch form); each hit is considered."""
        if self._failing_mask is None:
            return [self.test(c) for c in candidates]
        mask = [bool(x) for x in self._failing_mask(candidates)]
        for candidate, failed in zip(candidates, mask):
            if failed:
                self._accept(candidate)
        return mask

    # -- the one acceptance rule ------------------------------------------------------------------
    def _accept(self, candidate: T) -> bool:
        """Called only for candidates the oracle said fail the same way: keep it if strictly smaller."""
        size = self.size(candidate)
        if size >= self.size(self.best):
            return False
        self.best = candidate
        self.accepted.append(candidate)
        self.improvements.append((self.current_pass, size))
        if self._on_improve is not None:
            self._on_improve(candidate)
        return True
