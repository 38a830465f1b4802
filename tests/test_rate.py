"""A flaky failure's rate with its 95% interval (Wilson's score interval), as ISSUE.md and the verdict say it."""

from reprokit.data.rate import rate_line, wilson


def test_the_interval_is_wilsons_and_stays_within_0_and_1():
    low, high = wilson(7, 10)
    assert (round(low, 3), round(high, 3)) == (0.397, 0.892)  # the textbook values for 7 of 10
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0


def test_the_line_says_runs_and_interval():
    assert rate_line(7, 10) == "fails 7 of 10 runs (95% CI 40%–89%)"
    assert rate_line(2, 4) == "fails 2 of 4 runs (95% CI 15%–85%)"
