"""A pass's share of time: given once its first answer says what one answer costs, spent from then on."""

from __future__ import annotations

import time
from collections.abc import Callable


class Share:
    """of_seconds(one answer's seconds) -> the seconds the passes may spend. Until `start`, nothing is spent; after
    the deadline, `spent()` holds and `ran_out` records it (the passes had questions left to ask)."""

    def __init__(self, of_seconds: Callable[[float], float], clock: Callable[[], float] = time.monotonic):
        self.of_seconds, self.clock = of_seconds, clock
        self.given: float | None = None
        self.ran_out = False
        self._deadline: float | None = None

    def start(self, one_answer_seconds: float) -> None:
        """Give the share from what the first answer cost (once; later calls keep the first deadline)."""
        if self._deadline is None:
            self.given = self.of_seconds(one_answer_seconds)
            self._deadline = self.clock() + self.given

    def spent(self) -> bool:
        if self._deadline is not None and self.clock() > self._deadline:
            self.ran_out = True
        return self.ran_out
