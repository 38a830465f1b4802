"""How far repro.py may walk back through a reduction's accepted candidates when the smallest does not verify."""

from __future__ import annotations


def walk_back_most(flaky: bool) -> int:
    """How many of the reduction's accepted candidates repro.py may be checked as: a flaky failure's rate may fall
    as it is cut (#145445: a 15-line repro failed 1 of 6 fresh runs), so its best, one halfway back and the first;
    else the best alone (a deterministic failure's walk back would cost trials and rarely find more)."""
    return 3 if flaky else 1


def walked_back_note(verified: str, smallest: str) -> str:
    return (
        f"repro.py is {verified}: the smallest candidate ({smallest}) did not fail the same way in fresh "
        "interpreters (a flaky failure's rate may fall as it is cut)"
    )
