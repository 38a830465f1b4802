"""The repro's walk back: a flaky failure's repro may be a larger accepted graph when the smallest does not verify."""

from reprokit.minify.walk_back import walk_back_most, walked_back_note
from reprokit.search import verified_back


def test_a_flaky_failure_walks_back_to_the_first_accepted_candidate_that_verifies():
    accepted = ["40 nodes", "20 nodes", "9 nodes", "5 nodes", "3 nodes"]
    at = verified_back(accepted, lambda c: c == "9 nodes", most=walk_back_most(flaky=True))
    assert at is not None and accepted[at] == "9 nodes"


def test_a_flaky_walk_checks_at_most_three_candidates():
    asked = []
    verified_back(list("abcdefg"), lambda c: asked.append(c) or False, most=walk_back_most(flaky=True))
    assert asked == ["g", "d", "a"]


def test_a_steady_failure_checks_the_smallest_alone():
    asked = []
    at = verified_back(list("abc"), lambda c: asked.append(c) or c == "a", most=walk_back_most(flaky=False))
    assert at is None and asked == ["c"]


def test_the_note_says_which_graph_repro_py_is_and_why():
    note = walked_back_note("the graph of 9 nodes", "3 nodes")
    assert note.startswith("repro.py is the graph of 9 nodes: the smallest candidate (3 nodes) did not fail")
