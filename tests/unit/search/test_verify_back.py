"""search.verify_back: the walk back to a candidate that holds up when checked again."""

from reprokit.search.verify_back import verified_back, walk_back_order


def test_the_walk_checks_the_best_then_one_halfway_back_then_the_initial():
    assert walk_back_order(["c0", "c1", "c2", "c3", "c4"]) == [4, 2, 0]


def test_the_walk_asks_no_candidate_twice_and_at_most_most():
    assert walk_back_order(["c0", "c1"]) == [1, 0]
    assert walk_back_order(["c0"]) == [0]
    assert walk_back_order(["c0", "c1", "c2", "c3"], most=1) == [3]


def test_the_first_candidate_that_verifies_on_the_walk_is_named():
    accepted = ["initial", "half", "smaller", "smallest", "tiny"]
    asked = []
    assert verified_back(accepted, lambda c: asked.append(c) or c == "smaller") == 2
    assert asked == ["tiny", "smaller"]


def test_none_when_nothing_on_the_walk_verifies():
    assert verified_back(["a", "b", "c"], lambda c: False) is None
