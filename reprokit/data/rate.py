"""How often a flaky failure shows: k failing runs of n, with its 95% interval (Wilson's score interval, which
stays inside 0..1 and is sound for the few runs a bisect can afford)."""

from __future__ import annotations

import math

Z95 = 1.959964  # the standard normal's 97.5th percentile


def wilson(k: int, n: int, z: float = Z95) -> tuple:
    """(low, high) of the 95% interval of the failure rate after k failures in n runs."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_line(k: int, n: int) -> str:
    """ "fails 7 of 10 runs (95% CI 40%–89%)"."""
    low, high = wilson(k, n)
    return f"fails {k} of {n} runs (95% CI {low:.0%}–{high:.0%})"
