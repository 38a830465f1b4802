"""A run that failed another way is asked again a bounded number of times; a ladder that contradicts itself."""

from reprokit.bisect.steady import contradicting, describe, settle
from reprokit.data.records import StageResult, TrialSpec
from unit.fakes import BUG, OTHER, FakeRunner, failed, hung, passed


def spec_of(attempt: int) -> TrialSpec:
    return TrialSpec(mode="script", stage="none", script="train.py", attempt=attempt, label="baseline-no-compile")


def settled(*answers):
    runner = FakeRunner(lambda spec: answers[spec.attempt - 1])
    counted, runs = settle(runner, spec_of, BUG, failed(OTHER))
    return counted, runs, runner


def test_a_run_that_comes_right_counts_as_its_pass():
    counted, runs, runner = settled(passed())
    assert counted.kind == "pass" and runner.executed == 1
    assert describe("the run without compile", runs, BUG).startswith("the run without compile is flaky: it failed")


def test_a_run_failing_exactly_as_before_is_a_steady_failure_after_one_more_run():
    counted, runs, runner = settled(failed(OTHER), passed())
    assert counted.signature == OTHER and runner.executed == 1
    assert "is broken another way: it failed with ValueError: shape mismatch in all 2 runs" in describe(
        "stage aot_eager", runs, BUG
    )


def test_at_most_two_more_runs_are_spent():
    other = [failed(OTHER), hung(), failed(OTHER)]
    counted, runs, runner = settled(hung(), failed(OTHER), *other)
    assert runner.executed == 2 and len(runs) == 3


def test_a_rerun_that_fails_the_originals_way_ends_the_asking():
    counted, _, runner = settled(failed(BUG))
    assert counted.signature == BUG and runner.executed == 1


def ladder(*rows):
    return [StageResult(stage=st, kind=kind, summary="", seconds=1.0, same=kind == "exception") for st, kind in rows]


def test_a_ladder_that_holds_together_contradicts_nothing():
    rows = ladder(("eager", "pass"), ("aot_eager", "exception"), ("inductor", "exception"))
    assert contradicting(rows, "inductor") is None


def test_the_users_own_stage_passing_contradicts_the_original():
    rows = ladder(("eager", "pass"), ("aot_eager", "pass"), ("inductor", "pass"))
    assert contradicting(rows, "inductor") == "inductor"


def test_a_stage_passing_after_the_first_failing_one_contradicts_it():
    rows = ladder(("eager", "exception"), ("aot_eager", "pass"), ("inductor", "exception"))
    assert contradicting(rows, "inductor") == "aot_eager"
