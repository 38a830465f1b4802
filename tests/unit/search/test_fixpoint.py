"""search.fixpoint: named passes rerun until a round no longer shrinks the best."""

from reprokit.search.fixpoint import Pass, run_passes
from unit.fakes import problem


def drop_first(p, text):
    return text[1:] if p.consider(text[1:]) else text


def drop_last(p, text):
    return text[:-1] if p.consider(text[:-1]) else text


def test_passes_run_round_after_round_until_none_shrinks_the_state():
    p = problem("xxabxx", lambda text: "ab" in text)
    assert run_passes(p, [Pass("drop_first", drop_first), Pass("drop_last", drop_last)]) == "ab"
    assert p.best == "ab"


def test_each_improvement_names_the_pass_that_made_it():
    p = problem("xab", lambda text: "ab" in text)
    run_passes(p, [Pass("drop_last", drop_last), Pass("drop_first", drop_first)])
    assert p.improvements == [("drop_first", 2)]
    assert p.current_pass is None


def test_the_rounds_stop_at_max_rounds():
    p = problem("x" * 10, lambda text: True)
    assert run_passes(p, [Pass("drop_first", drop_first)], max_rounds=3) == "x" * 7
