"""How long a trial of a hang may take before it counts as hanging the same way: from a capture's failure, or
from the in-place bisect's first trial that hung (its longest finished compile, how long it ran)."""

from __future__ import annotations

from reprokit.data.kinds import OutcomeKind

# A hang's offline limit (hang_limit): a few times the longest compile that ended in the job, never under the
# floor (a graph trial's start and a compile on a loaded machine), and under half the hang's own duration.
HANG_LIMIT_FACTOR = 3
HANG_LIMIT_FLOOR = 20.0
HANG_LIMIT_UNKNOWN = 120.0  # no compile ended in the job and no duration known (kill -9)


def hang_limit(failure: dict) -> tuple[float, str]:
    """(seconds, why) each trial of a captured hang may take before it counts as hanging the same way."""
    longest = float(failure.get("longest_compile") or 0.0)
    hung = failure.get("seconds")
    limit = HANG_LIMIT_FACTOR * longest if longest else HANG_LIMIT_UNKNOWN
    why = f"{HANG_LIMIT_FACTOR}x the job's longest compile ({longest:.1f} s)" if longest else "no compile ended"
    if hung and float(hung) / 2 < limit:
        limit = float(hung) / 2
        why += f", at most half the hang's {float(hung):.0f} s"
    if limit < HANG_LIMIT_FLOOR:
        limit, why = HANG_LIMIT_FLOOR, why + f", at least {HANG_LIMIT_FLOOR:.0f} s"
    return round(limit, 1), why


def in_place_limit(outcome) -> dict | None:
    """{"seconds", "why"}: the compile limit of every later trial once the original hung in a compile (a graph
    reached the backend), derived as from a capture; None for another outcome (Dynamo's own hang among them)."""
    if outcome.kind != OutcomeKind.HANG or not outcome.compiled or not outcome.graphs:
        return None
    seconds, why = hang_limit({"longest_compile": outcome.longest_compile, "seconds": outcome.seconds})
    return {"seconds": seconds, "why": why}
