"""The Bisector's own rules beyond the ladder: a flaky original is bisected asking each question until it fails,
a too rare one is not; the subsystem search and the deferred questions within the failing stage."""

from reprokit.trial.repeat import ATTEMPT_STRIDE
from unit.fakes import bisector, failed, original, passed, runner_of

COUNTS = {"inductor/post_grad_passes": 4, "inductor/lowerings": 50}


def inductor_bug(fails_at_try=1, originals_failing=None):
    """Inductor fails the script at lowering 20, from its `fails_at_try`-th run of a question; the originals (by
    attempt) fail as `originals_failing` says."""

    def answer(spec):
        tried = spec.attempt // ATTEMPT_STRIDE + 1
        if spec.stage == "none":
            return passed()
        if spec.stage == "user":
            fails = originals_failing is None or spec.attempt in originals_failing
            return original(counters=COUNTS) if fails else passed(compiled=True, user_backend="inductor")
        if spec.stage != "inductor" or tried < fails_at_try:
            return passed()
        sub = spec.subsystem
        if sub is not None and ("names" not in sub and sub["name"] == "lowerings" and sub["max"] < 20):
            return passed()
        return failed(counters=COUNTS)

    return answer


def test_an_inductor_bug_names_its_stage_and_the_first_bad_lowering():
    isolation = bisector(inductor_bug(), configs=False).isolate()
    assert isolation.failing_stage == "inductor" and isolation.subsystem is not None
    assert (isolation.subsystem["name"], isolation.subsystem["application"]) == ("lowerings", 20)
    # The boundary's re-run waits until after the repro: it checks the answer, it does not change it.
    assert isolation.subsystem["confirmed"] is None and "confirm" in isolation.deferred


def test_the_deferred_confirmation_is_asked_after_the_repro():
    b = bisector(inductor_bug(), configs=False)
    evidence = b.after_repro(b.isolate())
    assert evidence.confirmed is True and evidence.trials == 2


def test_once_a_subsystem_names_the_cause_config_flips_wait_for_the_evidence():
    isolation = bisector(inductor_bug()).isolate()
    assert isolation.config is None and "configs" in isolation.deferred


def test_a_flaky_original_has_each_question_asked_until_it_fails():
    b = bisector(inductor_bug(fails_at_try=2, originals_failing={0, 2}), repeat=3, configs=False)
    isolation = b.isolate()
    assert isolation.flaky and (isolation.repro_rate, isolation.repro_runs) == (2 / 3, 3)
    assert isolation.flaky_tries == 3
    assert isolation.failing_stage == "inductor"
    assert isolation.subsystem is not None and isolation.subsystem["application"] == 20


def test_a_failure_too_rare_is_not_bisected_and_says_so():
    b = bisector(inductor_bug(originals_failing={0}), repeat=5)
    isolation = b.isolate()
    assert isolation.flaky and isolation.failing_stage is None
    assert isolation.message.startswith("flaky: the original fails 1 of 5 runs (95% CI 4%–62%)")
    assert "too rare to bisect run by run" in isolation.message


def test_the_evidence_phase_ends_with_its_answer_once_the_budget_is_spent():
    b = bisector(inductor_bug(), configs=False)
    isolation = b.isolate()
    runner_of(b).budget = runner_of(b).executed  # the --budget runs out as the repro is written
    evidence = b.after_repro(isolation)
    assert evidence.asked == ("confirm",) and evidence.trials == 0
    assert runner_of(b).over_budget == 2


def test_a_bug_under_an_explicit_mode_is_asked_of_every_other_mode():
    answer = inductor_bug()

    def only_in_max_autotune(spec):
        if spec.stage == "user" and spec.compile_overrides:
            # An override of `dynamic` alone keeps the script's own mode.
            return failed() if spec.compile_overrides.get("mode", "max-autotune") == "max-autotune" else passed()
        outcome = answer(spec)
        if spec.stage == "user":
            return original(counters=COUNTS, compile_args={"backend": "inductor", "mode": "max-autotune"})
        return outcome

    isolation = bisector(only_in_max_autotune, configs=False).isolate()
    assert isolation.modes is not None
    assert [(row["mode"], row["dynamic"], row["same"]) for row in isolation.modes] == [
        (None, None, False),
        ("reduce-overhead", None, False),
        ("max-autotune", True, True),
        ("max-autotune", False, True),
    ]
