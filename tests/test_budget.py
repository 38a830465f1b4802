"""--budget DURATION as a user types it."""

import pytest

from reprokit.data.budget import parse_budget, said
from reprokit.errors import ReprokitError


def test_durations_read_as_seconds_and_said_back():
    assert [parse_budget(t) for t in ("90s", "20m", "1h30m", "600", "1.5h", None)] == [
        90.0,
        1200.0,
        5400.0,
        600.0,
        5400.0,
        None,
    ]
    assert [said(s) for s in (90.0, 1200.0, 5400.0, 1.0)] == ["1 min 30 s", "20 min", "1 h 30 min", "1 s"]


@pytest.mark.parametrize("text", ["soon", "0", "20x", "m", "-5m"])
def test_anything_else_is_one_clear_line(text):
    with pytest.raises(ReprokitError, match=r"^--budget "):
        parse_budget(text)
