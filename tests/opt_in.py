"""The mark of a slow end-to-end test that CI leaves out because another test keeps its class."""

import os

import pytest

SLOW = "REPROKIT_ALL_SLOW_TESTS"


def opt_in(why: str) -> pytest.MarkDecorator:
    """Skip unless REPROKIT_ALL_SLOW_TESTS=1; why gives its seconds and the test that covers its class in CI."""
    return pytest.mark.skipif(os.environ.get(SLOW) != "1", reason=f"opt-in ({SLOW}=1; {why}")
