"""search.Problem: the best candidate so far and the one rule that replaces it."""

from unit.fakes import problem


def test_a_smaller_candidate_that_fails_the_same_way_becomes_the_best():
    p = problem("abcdef", lambda text: "c" in text)
    assert p.consider("abc")
    assert p.best == "abc"


def test_a_smaller_candidate_that_does_not_fail_is_refused():
    p = problem("abcdef", lambda text: "c" in text)
    assert not p.consider("ab")
    assert p.best == "abcdef"


def test_a_candidate_no_smaller_is_refused_without_asking_the_oracle():
    asked = []
    p = problem("abc", lambda text: asked.append(text) or True)
    assert not p.consider("xyz")
    assert asked == []


def test_a_larger_candidate_that_fails_never_replaces_a_smaller_best():
    p = problem("abcdef", lambda text: True)
    p.test("ab")
    p.test("abcd")
    assert p.best == "ab"


def test_every_accepted_best_is_kept_largest_first_with_its_pass():
    p = problem("abcdef", lambda text: "a" in text)
    p.current_pass = "cut_tail"
    p.test("abcd")
    p.test("ab")
    assert p.accepted == ["abcdef", "abcd", "ab"]
    assert p.improvements == [("cut_tail", 4), ("cut_tail", 2)]


def test_on_improve_sees_each_new_best_once():
    seen = []
    p = problem("abcdef", lambda text: True, on_improve=seen.append)
    p.first_failing(["abcde", "abc"])
    p.failing_mask(["ab", "abcd"])
    assert seen == ["abcde", "ab"]


def test_a_batch_answer_keeps_only_smaller_candidates():
    p = problem("abc", lambda text: True, failing_mask=lambda cands: [True for _ in cands])
    assert p.failing_mask(["abcdef", "a"]) == [True, True]
    assert p.best == "a"
