"""`--budget DURATION`: how long a whole run may take, read from what a user types ("90s", "20m", "1h30m", "600")."""

from __future__ import annotations

import re

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
