"""`--budget DURATION`: how long a whole run may take, read from what a user types ("90s", "20m", "1h30m", "600"),
as the run spends it (its deadline) and as verdict.json records it."""

from __future__ import annotations

import dataclasses
import re
import time

from reprokit.errors import ReprokitError

_PART = re.compile(r"(\d+(?:\.\d+)?)([hms])")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_budget(text: str | None, option: str = "--budget") -> float | None:
    """Seconds, or None when no duration was given; one clear line naming `option` for anything else."""
    if text is None:
        return None
    t = text.strip().lower().replace(" ", "")
    if re.fullmatch(r"\d+(?:\.\d+)?", t):
        seconds = float(t)
    elif t and _PART.sub("", t) == "":
        seconds = sum(float(n) * _UNIT[u] for n, u in _PART.findall(t))
    else:
        raise ReprokitError(f"{option} takes a duration like 90s, 20m or 1h30m (got {text!r})")
    if seconds <= 0:
        raise ReprokitError(f"{option} must be more than 0 seconds (got {text!r})")
    return seconds


def said(seconds: float) -> str:
    """The budget as the user would write it: 90 s, 20 min, 1 h 30 min."""
    h, rest = divmod(int(round(seconds)), 3600)
    m, s = divmod(rest, 60)
    parts = [f"{h} h" if h else "", f"{m} min" if m else "", f"{s} s" if s else ""]
    return " ".join(p for p in parts if p) or "0 s"


@dataclasses.dataclass(frozen=True)
class Budget:
    """--budget: its seconds, from the run's start (time.monotonic)."""

    seconds: float
    started: float

    @classmethod
    def of(cls, seconds: float | None, started: float) -> Budget | None:
        """The run's budget counted from `started`; None when no --budget was given."""
        return cls(seconds, started) if seconds else None

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def exhausted(self) -> bool:
        return time.monotonic() >= self.deadline

    def record(self, not_asked: list, trials_not_run: int) -> dict:
        """verdict.json's budget: spent or not, what was never asked, the search trials not run."""
        spent = bool(not_asked or trials_not_run)
        return {"seconds": self.seconds, "spent": spent, "not_asked": not_asked, "trials_not_run": trials_not_run}


def spent_note(record: dict) -> str | None:
    """What a spent budget left undone, said as a note; None while it was not spent."""
    if not record["spent"]:
        return None
    not_asked, trials_not_run = record["not_asked"], record["trials_not_run"]
    parts = [
        f"not asked: {', '.join(not_asked)}" if not_asked else "",
        f"{trials_not_run} search trials not run, so repro.py (when written) is the smallest verified so far, not a "
        "minimal one"
        if trials_not_run
        else "",
    ]
    return f"the budget of {said(record['seconds'])} was spent: " + "; ".join(p for p in parts if p)
