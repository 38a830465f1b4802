"""search.verify_back: the walk back to a candidate that holds up when checked again."""

from reprokit.search import Share, verified_back, walk_back_order


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


def test_a_share_is_given_from_the_first_answer_and_spent_at_its_deadline():
    now = [100.0]
    share = Share(lambda seconds: 30 * seconds, clock=lambda: now[0])
    assert not share.spent()  # not started: nothing is spent
    share.start(2.0)
    share.start(50.0)  # the first answer's cost holds
    assert share.given == 60.0
    now[0] = 160.0
    assert not share.spent()
    now[0] = 160.5
    assert share.spent() and share.ran_out
