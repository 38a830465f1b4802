"""The numeric options' guards: a count, a limit or a size the run cannot use is one line naming the option and
what it takes (exit 2), before any folder is made or any trial runs. Before, `--jobs 0` and `--timeout 0` were
taken silently (0 trials at once; 0 read as "no limit given")."""

from __future__ import annotations

import math

from reprokit.errors import ReprokitError


def at_least_one(option: str, value: int | None, what: str) -> None:
    """A count (trials at once, ranks, runs), when given, is 1 or more."""
    if value is not None and value < 1:
        raise ReprokitError(f"{option} takes {what}, 1 or more (got {value})")


def above_zero(option: str, value: float | None, what: str) -> None:
    """A limit in seconds, when given, is more than 0 and finite (nan and inf would mean no limit at all)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise ReprokitError(f"{option} takes {what}, more than 0 (got {value:g})")


def not_negative(option: str, value: float | None, what: str) -> None:
    """A size or a threshold, when given, is 0 or more (0 is a choice: no real inputs saved, any slowdown counts)."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise ReprokitError(f"{option} takes {what}, 0 or more (got {value:g})")


def trial_options(jobs: int | None = None, timeout: float | None = None, ranks: int | None = None) -> None:
    """What every command that runs trials takes: trials at once, seconds per trial, ranks per trial."""
    at_least_one("--jobs", jobs, "a number of trials at once")
    above_zero("--timeout", timeout, "seconds per trial")
    at_least_one("--nproc-per-node", ranks, "a number of ranks")


def bisect_options(jobs, timeout, ranks, repeat: int, max_input_bytes: int, slow_threshold: float) -> None:
    """A script bisect's numbers (slow_threshold a fraction, said as the percent the user typed)."""
    trial_options(jobs, timeout, ranks)
    at_least_one("--repeat", repeat, "a number of runs")
    not_negative("--max-input-bytes", max_input_bytes, "a size in bytes")
    not_negative("--slow-threshold", round(slow_threshold * 100, 6), "a percent")
