"""A flaky failure's trials: each question asked until it fails the original's way or has passed `tries` times."""

from reprokit.data.records import TrialSpec
from reprokit.trial.repeat import ATTEMPT_STRIDE, MAX_TRIES, too_rare, tries_for
from unit.fakes import BUG, OTHER, FakeRunner, failed, is_spent, passed, until_it_fails


def question(label: str = "stage-inductor", mode: str = "script") -> TrialSpec:
    # The label is no part of a trial's key: the argument tells the questions apart.
    return TrialSpec(mode=mode, stage="inductor", script="train.py", argv=(label,), label=label)


def fails_on_try(n: int, other=None):
    """Passes (or fails `other`) until its n-th run (1-based), which fails with BUG."""
    return lambda spec: failed() if spec.attempt // ATTEMPT_STRIDE + 1 >= n else (other or passed())


def test_tries_make_a_chance_pass_rare():
    assert tries_for(1.0) == 1
    assert tries_for(0.5) == 5  # 0.5 ** 5 < 5% <= 0.5 ** 4
    assert tries_for(0.0) == MAX_TRIES


def test_a_failure_too_rare_to_bisect_run_by_run():
    assert too_rare(0.2) and not too_rare(0.5)


def test_a_question_counts_as_failing_at_its_first_run_that_fails_that_way():
    inner = FakeRunner(fails_on_try(3))
    assert until_it_fails(inner, tries=5)(question()).signature == BUG
    assert inner.executed == 3


def test_a_question_counts_as_passing_only_after_tries_runs_that_pass():
    inner = FakeRunner(fails_on_try(99))
    assert until_it_fails(inner, tries=4)(question()).kind == "pass"
    assert inner.executed == 4


def test_a_question_failing_only_another_way_answers_with_that_failure():
    inner = FakeRunner(fails_on_try(99, other=failed(OTHER)))
    assert until_it_fails(inner, tries=3)(question()).signature == OTHER


def test_map_asks_again_only_the_questions_that_have_not_failed():
    answers = {"a": fails_on_try(1), "b": fails_on_try(2), "c": fails_on_try(99)}
    inner = FakeRunner(lambda spec: answers[spec.label](spec))
    out = until_it_fails(inner, tries=3).map([question("a"), question("b"), question("c")])
    assert [o.kind for o in out] == ["exception", "exception", "pass"]
    assert inner.labels().count("a") == 1 and inner.labels().count("b") == 2 and inner.labels().count("c") == 3


def test_a_repro_being_written_is_asked_once():
    inner = FakeRunner(fails_on_try(99))
    until_it_fails(inner, tries=5)(question(mode="repro"))
    assert inner.executed == 1


def test_a_spent_budget_is_not_asked_again():
    inner = FakeRunner(fails_on_try(99), budget=0)
    assert is_spent(until_it_fails(inner, tries=5)(question()))
    assert inner.over_budget == 1


def test_a_flaky_view_shares_the_runners_journal_and_counters():
    inner = FakeRunner(fails_on_try(2))
    until_it_fails(inner, tries=3)(question())
    assert inner.executed == 2 and inner(question()).kind == "pass"  # the first try's answer, from the journal
    assert inner.executed == 2
