"""A repro's reliability, measured and said (issue 50, item 8): a verified repro.py is run again alone in fresh
interpreters, up to REPROKIT_REPRO_RUNS times (10) counting its verification's runs, stopping at 3 failures; the
rate goes into the verdict and ISSUE.md, and under 3 failures it is not called verified. Small repros without torch:
each run is a fresh interpreter of a few milliseconds."""

import json
import sys

import pytest

from reprokit.data.phases import Isolation, Repro
from reprokit.data.rundir import RunDir
from reprokit.data.signature import MISMATCH, Signature
from reprokit.data.verdict import Verdict
from reprokit.minify.reliability import measure, reproduces
from reprokit.report.issue_notes import repro_note

RAISES = "raise ValueError('Cannot view a tensor with shape [4] and strides [2]')\n"
# Fails on the first run of every four (a counter file beside it): 3 failures need 9 runs.
ONE_IN_FOUR = (
    "import os\n"
    "n = int(open('count').read()) if os.path.exists('count') else 0\n"
    "open('count', 'w').write(str(n + 1))\n"
    "if n % 4 == 0:\n"
    "    raise ValueError('Cannot view a tensor with shape [4] and strides [2]')\n"
)


@pytest.fixture(autouse=True)
def default_runs(monkeypatch):
    """The default count (10), which the suite's conftest lowers to 1 for every other test."""
    monkeypatch.delenv("REPROKIT_REPRO_RUNS", raising=False)


TARGET = Signature("exception", "ValueError", "Cannot view a tensor with shape [N] and strides [N]")


def run_folder(tmp_path, text: str) -> RunDir:
    run = RunDir(str(tmp_path))
    run.write_text("repro.py", text)
    return run


def verified(fresh_runs: int) -> Repro:
    return Repro(
        kind="source",
        path="repro.py",
        verified=True,
        fresh_runs=fresh_runs,
        signature=TARGET.to_dict(),
        nodes_before=64,
        nodes_after=5,
        unit="lines",
    )


def measured(run: RunDir, fresh_runs: int, emit) -> Repro:
    return measure(run, verified(fresh_runs), None, 60, emit, sys.executable)


def test_a_repro_that_fails_every_time_costs_one_more_run_and_says_its_rate(tmp_path):
    notes: list = []
    repro = measured(run_folder(tmp_path, RAISES), 2, lambda event, **d: notes.append(d))
    assert repro.verified is True and notes == []
    assert repro.reliability == {"failed": 3, "runs": 3, "floor": 3, "most": 10}
    v = Verdict(Isolation(script="train.py"), repro=repro)
    assert repro_note(v, "repro.py", "inline") == (
        "the script itself, reduced statement by statement, 5 of 64 lines, verified to fail the same way in 3 of 3 "
        "runs in fresh interpreters: run up to 10 times, it stops at 3 failures, and fewer would not be called verified"
    )


def test_a_repro_under_the_floor_is_not_called_verified(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_REPRO_RUNS", "6")
    run, notes = run_folder(tmp_path, ONE_IN_FOUR), []
    (tmp_path / "count").write_text("1")  # its verification was the first run, which failed
    repro = measured(run, 1, lambda event, **d: notes.append(d["text"]))
    assert repro.reliability == {"failed": 2, "runs": 6, "floor": 3, "most": 6}
    assert repro.verified is False
    said = "repro.py failed the same way in only 2 of 6 runs in fresh interpreters, under the floor of 3: not called verified"
    assert notes == [said] and repro.message == said
    assert json.loads((tmp_path / "count").read_text()) == 6  # five more runs, then it stopped


def test_a_repro_at_the_floor_after_nine_runs_is_verified(tmp_path):
    run = run_folder(tmp_path, ONE_IN_FOUR)
    (tmp_path / "count").write_text("1")
    repro = measured(run, 1, lambda event, **d: None)
    assert (repro.verified, repro.reliability) == (True, {"failed": 3, "runs": 9, "floor": 3, "most": 10})


def test_a_run_counts_only_when_it_fails_the_way_its_verification_did():
    line = 'Traceback (most recent call last):\n  File "repro.py", line 1\n'
    assert reproduces(1, line + "ValueError: Cannot view a tensor with shape [8] and strides [1]\n", TARGET)
    assert not reproduces(1, line + "RuntimeError: another failure\n", TARGET)
    assert not reproduces(0, "", TARGET)
    assert reproduces(1, "compile failed: ValueError\n", TARGET)  # the script caught it and exited (child/caught.py)
    mismatch = Signature("exit", None, "exit code 1", None, cause=MISMATCH)
    assert reproduces(1, "max abs diff 0.5, 3 of 8 elements differ\n", Signature("exit", None, "exit code 1"))
    assert reproduces(1, line + "AssertionError: max abs diff 0.5\n", mismatch)
    assert reproduces(-11, "", Signature("crash", "SIGSEGV", "killed by SIGSEGV"))
    assert not reproduces(-6, "", Signature("crash", "SIGSEGV", "killed by SIGSEGV"))
