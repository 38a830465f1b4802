"""ProbDD's lesson for sweeps of proposals: an edit the oracle refused is likely refused again, so it is asked after
the edits not asked yet, and not at all once refused `skip_after` times.

A sweep (take the first proposal that fails the same way, then propose again from it) re-asks every refused edit
after each hit. An edit is named by what it changes: the part of the candidate that differs from the text it was
proposed on, with a little of the text on either side, so the same edit proposed again on a text changed elsewhere
is known, and one whose surroundings changed is new. What was refused is forgotten once another pass shrinks the
text: that pass may have removed what made the edit fail (a helper inlined, then its def deleted). Forgotten once:
an edit refused again after that is not asked in later rounds either (`chances`), since each round re-asked every
refused edit of every sweep, most of a reduction's oracle calls on the corpus, and almost none of them hit.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Protocol

# Characters of unchanged text on either side that are part of an edit's name.
CONTEXT = 40


class AsksFirstFailing(Protocol):
    current_pass: str | None
    improvements: list

    def first_failing(self, candidates: Sequence) -> int | None: ...


def edit_of(base: Sequence, candidate: Sequence) -> tuple:
    """(before, removed, inserted, after): what `candidate` changes in `base`, with CONTEXT items either side."""
    start = 0
    limit = min(len(base), len(candidate))
    while start < limit and base[start] == candidate[start]:
        start += 1
    end = 0
    while end < limit - start and base[len(base) - 1 - end] == candidate[len(candidate) - 1 - end]:
        end += 1
    stop = len(base) - end
    parts = (base[max(0, start - CONTEXT) : start], base[start:stop], candidate[start : len(candidate) - end])
    return tuple(_hashable(x) for x in (*parts, base[stop : stop + CONTEXT]))


def _hashable(part: Sequence):
    return part if isinstance(part, (str, bytes, tuple)) else tuple(part)


class EditMemory:
    """How often each edit was refused, over a whole reduction (every sweep, pass and round)."""

    def __init__(self, skip_after: int = 1, chances: int = 2):
        self.skip_after, self.chances = skip_after, chances
        self.refused: collections.Counter = collections.Counter()  # since another pass last shrank the text
        self.ever: collections.Counter = collections.Counter()  # over the whole reduction
        self.skipped = 0  # proposals left out because their edit was refused before
        self._seen = 0  # the problem's improvements already looked at

    def _forget_after_other_passes(self, problem: AsksFirstFailing) -> None:
        if any(name != problem.current_pass for name, _ in problem.improvements[self._seen :]):
            self.refused.clear()
        self._seen = len(problem.improvements)

    def first_failing(self, problem: AsksFirstFailing, base: Sequence, candidates: Sequence) -> int | None:
        """problem.first_failing over `candidates` (edits of `base`), edits never refused first and those refused
        skip_after times left out; the index into `candidates` of the hit, or None."""
        self._forget_after_other_passes(problem)
        names = [edit_of(base, c) for c in candidates]
        # stable: the caller's order among equals
        order = sorted(range(len(candidates)), key=lambda i: (self.refused[names[i]], self.ever[names[i]]))
        asked = [i for i in order if self.refused[names[i]] < self.skip_after and self.ever[names[i]] < self.chances]
        self.skipped += len(order) - len(asked)
        hit = problem.first_failing([candidates[i] for i in asked])
        for i in asked[: len(asked) if hit is None else hit]:
            self.refused[names[i]] += 1
            self.ever[names[i]] += 1
        return None if hit is None else asked[hit]
