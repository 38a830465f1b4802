"""A pass's share of time: given once its first answer says what one answer costs, spent from then on; bounded,
where a whole run keeps to a time plan, by what the plan has left."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable


@dataclasses.dataclass(frozen=True)
class Plan:
    """A whole run's time, as a value: `end`, the clock time the run aims to be done by; `floor`, the seconds a share
    keeps however late it starts; and the reserve for what must still run after a share: `runs_after` runs, each
    costing one answer's seconds plus `overhead` (a fresh process's start)."""

    end: float
    floor: float
    runs_after: float = 0.0
    overhead: float = 0.0

    def reserve(self, one_answer_seconds: float) -> float:
        return self.runs_after * (self.overhead + one_answer_seconds)

    def left(self, now: float, one_answer_seconds: float) -> float:
        """Seconds a share starting `now` may spend: up to the end less the reserve, and never under the floor."""
        return max(self.floor, self.end - now - self.reserve(one_answer_seconds))


class Share:
    """of_seconds(one answer's seconds) -> the seconds the passes may spend, at most what `plan` has left when the
    share starts. Until `start`, nothing is spent; after the deadline, `spent()` holds and `ran_out` records it (the
    passes had questions left to ask)."""

    def __init__(
        self,
        of_seconds: Callable[[float], float],
        clock: Callable[[], float] = time.monotonic,
        plan: Plan | None = None,
    ):
        self.of_seconds, self.clock, self.plan = of_seconds, clock, plan
        self.given: float | None = None
        self.ran_out = False
        self._deadline: float | None = None

    def start(self, one_answer_seconds: float) -> None:
        """Give the share from what the first answer cost (once; later calls keep the first deadline)."""
        if self._deadline is None:
            now = self.clock()
            self.given = self.of_seconds(one_answer_seconds)
            if self.plan is not None:
                self.given = min(self.given, self.plan.left(now, one_answer_seconds))
            self._deadline = now + self.given

    def spent(self) -> bool:
        if self._deadline is not None and self.clock() > self._deadline:
            self.ran_out = True
        return self.ran_out
