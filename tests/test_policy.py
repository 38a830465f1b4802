"""The Runner's trial policy and its views, in milliseconds: every trial here is answered by `how` (the Runner's
hook for a run that is not a trial process), so nothing compiles and no process starts."""

from __future__ import annotations

import dataclasses
import time

import pytest

from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial.policy import TrialPolicy
from reprokit.trial.runner import Runner

BOOM = Signature(kind="exception", exc_type="RuntimeError", message="boom")


def outcome(kind: str = "pass", signature: Signature | None = None) -> Outcome:
    return Outcome(kind=kind, signature=signature or Signature(kind=kind), seconds=0.1)


def spec(label: str = "q", **kw) -> TrialSpec:
    return TrialSpec(mode="script", stage="inductor", script="s.py", label=label, **kw)


class Answers:
    """how(device, seconds) for the Runner: answers in turn, recording each limit it was given."""

    def __init__(self, *outcomes: Outcome):
        self.outcomes = list(outcomes)
        self.limits: list[float] = []

    def __call__(self, _device, seconds: float) -> Outcome:
        self.limits.append(seconds)
        return self.outcomes.pop(0)


@pytest.fixture
def runner(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "0")
    r = Runner(RunDir.create(str(tmp_path), "policy"), timeout=100.0)
    yield r
    r.close()


def test_a_policy_is_frozen_and_its_switches_cannot_change_under_it():
    env = {"A": "1"}
    policy = TrialPolicy(timeout=5.0, env=env)
    env["A"] = "2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.timeout = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        policy.env["A"] = "3"  # type: ignore[index]
    assert policy.env == {"A": "1"} and policy.replace(timeout=1.0).env == {"A": "1"}


def test_a_question_asked_more_than_once_needs_the_failure_it_waits_for():
    with pytest.raises(ValueError):
        TrialPolicy(timeout=5.0, tries=3)


def test_the_policy_switches_a_spec_the_spec_s_own_variables_winning_and_limits_compiles_only():
    policy = TrialPolicy(timeout=5.0, env={"A": "1", "B": "1"}, compile_limit=7.0)
    switched = policy.switched(spec(env={"B": "2"}))
    assert (switched.env, switched.compile_limit) == ({"A": "1", "B": "2"}, 7.0)
    assert policy.switched(TrialSpec(mode="repro", stage="inductor")).compile_limit is None
    assert (policy.limit(None), policy.limit(3.0), policy.limit(9.0)) == (5.0, 3.0, 5.0)


def test_a_view_asks_under_its_policy_and_leaves_the_runner_s_as_it_was(runner):
    view = runner.with_policy(timeout=10.0, env={"X": "1"})
    assert (view.timeout, view.env, runner.timeout, runner.env) == (10.0, {"X": "1"}, 100.0, {})
    answers = Answers(outcome(), outcome())
    view(spec(), how=answers)
    runner(spec(), how=answers)  # another key: the view's switch is in the other's spec
    assert answers.limits == [10.0, 100.0]
    with pytest.raises(AttributeError):
        runner.timeout = 1.0  # type: ignore[misc]


def test_views_share_the_journal_and_the_counters(runner, tmp_path):
    view = runner.with_policy(timeout=10.0)
    first = view(spec(), how=Answers(outcome("exception", BOOM)))
    assert runner(spec(), how=Answers()) == first  # answered from the journal the view wrote: nothing run
    assert (runner.executed, view.executed) == (1, 1)
    assert [e["label"] for e in runner.run_dir.journal()] == ["q"]


def test_a_stop_through_a_view_stops_the_runner(runner):
    from reprokit.trial.cancel import TrialsCancelled

    runner.with_policy(timeout=1.0).stop()
    with pytest.raises(TrialsCancelled):
        runner(spec(), how=Answers(outcome()))


def test_past_the_deadline_a_search_trial_is_a_budget_spent_outcome_and_a_repro_check_still_runs(runner):
    view = runner.with_policy(deadline=time.monotonic() - 1)
    spent = view(spec(), how=Answers(outcome()))
    assert spent.kind == OutcomeKind.BUDGET_SPENT and not spent.failed
    assert view(TrialSpec(mode="repro", stage="inductor"), how=Answers(outcome())).kind == "pass"
    assert (runner.over_budget, runner.executed, len(runner.run_dir.journal())) == (1, 1, 1)
    assert runner(spec(), how=Answers(outcome())).kind == "pass"  # not journaled: asked again without a deadline


def test_the_judge_rejudges_every_trial_the_view_runs(runner):
    def slow(_spec, out):
        return dataclasses.replace(out, kind="slow", signature=Signature(kind="slow"))

    assert runner.with_policy(judge=slow)(spec(), how=Answers(outcome())).kind == "slow"
    assert runner(spec("other", attempt=1), how=Answers(outcome())).kind == "pass"


def test_a_flaky_policy_asks_until_the_failure_shows(runner):
    view = runner.with_policy(tries=3, target=BOOM)
    answers = Answers(outcome(), outcome("exception", BOOM), outcome())
    assert view(spec(), how=answers).signature == BOOM
    assert len(answers.outcomes) == 1 and runner.executed == 2  # the third run was not needed


def test_a_flaky_policy_passes_after_its_tries_and_a_plain_runner_asks_once(runner):
    assert runner.with_policy(tries=3, target=BOOM)(spec(), how=Answers(*[outcome()] * 3)).kind == "pass"
    assert runner.executed == 3
    answers = Answers(outcome(), outcome())
    runner(spec("again", attempt=7), how=answers)
    assert len(answers.outcomes) == 1


def test_a_limit_given_as_a_function_is_asked_in_place_of_the_policy_s(runner):
    answers = Answers(outcome())
    runner(spec(), limit=lambda: 250.0, how=answers)
    assert answers.limits == [250.0]


def test_a_spec_that_saves_a_graph_keeps_the_json_and_key_journals_were_written_with():
    saves = TrialSpec(mode="script", stage="inductor", script="s.py", save_graph=2, label="x")
    assert saves.to_dict()["capture"] == 2 and "save_graph" not in saves.to_dict()
    assert TrialSpec.from_dict(saves.to_dict()) == saves
    assert saves.key() == "8cc94990a03da652"  # the key of TrialSpec(..., capture=2) before the field's rename
