"""The session's failure chased and its runner's policy change through its own methods, in milliseconds (no trial
runs)."""

from __future__ import annotations

import pytest

from reprokit.bisect.session import BisectOptions, Naming, Session
from reprokit.data.records import Signature
from reprokit.data.rundir import RunDir
from reprokit.trial.runner import Runner

BOOM = Signature(kind="exception", exc_type="RuntimeError", message="boom")


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "0")
    script = tmp_path / "s.py"
    script.write_text("pass\n")
    runner = Runner(RunDir.create(str(tmp_path / "runs"), "session"), timeout=100.0)
    yield Session(BisectOptions(script=str(script), cwd=str(tmp_path)), runner, lambda *a, **k: None)
    runner.close()


def test_the_target_changes_only_through_chase(session):
    assert session.target is None
    assert session.chase(BOOM) is BOOM and session.target is BOOM
    with pytest.raises(AttributeError):
        session.target = None  # type: ignore[misc]


def test_use_policy_makes_every_later_trial_of_the_session_ask_under_it(session):
    first = session.runner
    session.use_policy(timeout=5.0)
    session.use_policy(env={"A": "1"})
    assert (session.runner.timeout, session.runner.env, first.timeout) == (5.0, {"A": "1"}, 100.0)


def test_a_named_view_renames_its_trials_and_shares_what_the_session_found(session):
    aoti = session.named(Naming(stages=(("inductor", "user"),), label_prefix="aoti-"))
    spec = aoti.spec("inductor", "config-all")
    assert (spec.stage, spec.label) == ("user", "aoti-config-all")
    assert session.spec("inductor", "config-all").stage == "inductor"
    aoti.others["x"] = {}
    assert "x" in session.others


def test_a_baseline_still_running_takes_the_limit_the_original_s_time_sets(tmp_path, monkeypatch):
    """start_round: the baseline asks its limit while it runs, and the original answering first lowers it (each
    trial here is answered by `how`, so nothing runs)."""
    import threading
    import time

    from reprokit.bisect import start
    from reprokit.data.records import Outcome

    original_done = threading.Event()
    seen: list = []
    real_call = Runner.__call__

    def answered(runner, spec, limit=None, how=None):
        def how_(_device, _seconds):
            if spec.label == "original":
                original_done.set()
                return Outcome(kind="exception", signature=BOOM, seconds=2.0)
            original_done.wait(10)
            waited = time.monotonic() + 5
            while limit() == 600.0 and time.monotonic() < waited:  # asked as the trial's process asks it, polling
                time.sleep(0.01)
            seen.append(limit())
            return Outcome(kind="hang", signature=Signature(kind="hang"), seconds=3.0)

        return real_call(runner, spec, limit=limit, how=how_)

    monkeypatch.setattr(Runner, "__call__", answered)
    monkeypatch.setenv("REPROKIT_WARM", "0")
    runner = Runner(RunDir.create(str(tmp_path / "runs"), "limit"), timeout=600.0, jobs=2)
    session = Session(BisectOptions(script=str(tmp_path / "s.py"), cwd=str(tmp_path)), runner, lambda *a, **k: None)
    try:
        start.start_round(session)
    finally:
        runner.close()
    assert seen == [start.limit_from_original(2.0)] and session.runner.timeout == 60.0
