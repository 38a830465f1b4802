"""run_phases' time plan for the evidence (issue 50, every case within 5 minutes): a default run whose 5 minutes
would not hold the config flips' search when the evidence begins leaves it, says so and records it; the one-run
questions, the flips' first round among them, are still asked. Trials answered by the fake runner (the real compiler's evidence is tested end to end)."""

import dataclasses
import time

from reprokit.app.pipeline import Steps, run_phases
from reprokit.cli_summary import summary_table
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.minify.plan import evidence_in_time, whole_run_plan
from unit.bisect.test_bisector import inductor_bug
from unit.fakes import bisector, failed, passed, trial_folder

NO_REPRO = Steps(minify=False, pack=False)
FACTS = RunFacts(python="/usr/bin/python3", options={"cwd": "/w"})


# What the failing inductor run recorded: two flags in force, no setting of the script's own.
RECORD = {"cuda": False, "flag_values": {"fallback_random": False, "freezing": False}}


def fixed_by_both_flips(tmp_path):
    """inductor_bug, with a failing inductor run that records its flags, and the failure gone only when both are
    flipped together: the first round's all-at-once passes, no flip alone is asked, the smallest set is searched."""
    bug, folder = inductor_bug(), trial_folder(str(tmp_path), "stage-inductor", RECORD)

    def answer(spec):
        if spec.stage == "inductor" and spec.config:
            return passed() if spec.config.get("fallback_random") and spec.config.get("freezing") else failed()
        out = bug(spec)
        # the original is inductor's failing run: the ladder asks no inductor rung of its own
        return dataclasses.replace(out, trial_dir=folder) if out.failed else out

    return answer


def phases_begun(seconds_ago: float, tmp_path, answer=None):
    """(verdict, notes, labels asked after the isolation) of a run begun `seconds_ago`, no --budget."""
    b, notes = bisector(answer or inductor_bug()), []
    run = RunDir(str(tmp_path))
    emit = lambda event, **d: notes.append(d["text"]) if event == "note" else None  # noqa: E731
    isolation_asks = None

    def after(isolation, case=None):
        nonlocal isolation_asks
        isolation_asks = isolation.deferred
        return real(isolation, case)

    real, b.after_repro = b.after_repro, after
    v = run_phases(run, FACTS, b, b.runner, NO_REPRO, emit, None, started=time.monotonic() - seconds_ago)
    return v, notes, isolation_asks


def test_a_run_past_its_five_minutes_leaves_the_config_flips_search_and_says_so(tmp_path):
    v, notes, asked = phases_begun(400.0, tmp_path, fixed_by_both_flips(tmp_path))
    # the boundary's re-run and the flips' first round: a run each, side by side
    assert asked == ("confirm", "configs")
    assert v.run.time_plan == {"seconds": 300.0, "not_asked": ["config_set"]}
    assert v.deferred == ("config_set",) and v.config is None and v.subsystem["confirmed"] is True
    assert v.evidence.trials == 3  # the re-run's two, the flips all at once
    assert (
        "the run would end past its 5 minutes, so not searched: the smallest set of config flips that avoids the "
        "failure, where no flip alone does (--budget 20m searches it)"
    ) in notes
    row = f"{'time plan':<26} 5 min: not asked: the config flips' smallest set (--budget 20m asks it)"
    assert row in summary_table(v).splitlines()


def test_a_run_with_no_flip_to_ask_leaves_nothing_to_search_late(tmp_path):
    # the fake's own inductor run records no flag: no first round, nothing left, so the time plan says nothing
    v, notes, asked = phases_begun(400.0, tmp_path)
    assert asked == ("confirm", "configs")
    assert v.run.time_plan is None and v.deferred == () and not any("past its" in n for n in notes)


def test_a_late_run_whose_first_round_finds_the_scripts_own_setting_has_its_workaround(tmp_path):
    # the script set fallback_random; reset alone, the failure goes: the first round is the answer, nothing is left
    record = {**RECORD, "user_configs": {"torch._inductor.config.fallback_random": True}}
    bug, folder = inductor_bug(), trial_folder(str(tmp_path), "stage-inductor", record)

    def answer(spec):
        if spec.stage == "inductor" and spec.config:
            return passed() if spec.config.get("fallback_random") is False else failed()
        out = bug(spec)
        return dataclasses.replace(out, trial_dir=folder) if out.failed else out

    v, notes, asked = phases_begun(400.0, tmp_path, answer)
    assert asked == ("confirm", "configs")
    assert v.config == {"fallback_random": False} and v.deferred == ()
    assert v.run.time_plan is None and not any("past its" in n for n in notes)


def test_a_run_within_its_five_minutes_asks_every_deferred_question(tmp_path):
    v, notes, asked = phases_begun(10.0, tmp_path, fixed_by_both_flips(tmp_path))
    assert asked == ("confirm", "configs", "config_set")
    assert v.config == {"fallback_random": True, "freezing": True}
    assert v.run.time_plan is None and v.deferred == () and not any("past its" in n for n in notes)


def test_the_config_flips_are_asked_while_the_plan_holds_ten_more_runs_of_the_script():
    plan = whole_run_plan(0.0, None)  # ends at 300 s; each run costs a fresh process's 5 s more
    deferred = ("confirm", "configs", "config_set", "torch_logs")
    # #188422: its evidence began at 227 s, one run of its script takes 6.3 s: 10 runs of 11.3 s do not fit (its
    # 6 config runs took 117 s)
    assert evidence_in_time(deferred, plan, 227.0, 6.3) == (("confirm", "configs", "torch_logs"), ("config_set",))
    assert evidence_in_time(deferred, plan, 180.0, 6.3) == (deferred, ())  # 180 + 113 s fits
    assert evidence_in_time(deferred, None, 9999.0, 7.0) == (deferred, ())  # --budget rules instead
