"""Progress as a user sees it (issue #28): the plain lines off a terminal, the per-phase count of every trial and
second, the neutral mark of an original run that passes, and, under a pseudo-terminal, the quick start's bisect
never silent for more than 2 s."""

import os
import pathlib
import re
import sys

import pytest
from pty_record import longest_silence, record

from reprokit.cli_render import Printer
from reprokit.cli_tally import Tally, tally_table
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.signature import Signature

ROOT = pathlib.Path(__file__).resolve().parent.parent  # the checkout under test, not the installed reprokit


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def passing(seconds):
    return Outcome(kind="pass", signature=Signature(kind="pass"), seconds=seconds)


def trial(printer, label, seconds, cached=False, mode="script", script="train.py"):
    printer(
        "trial",
        spec=TrialSpec(mode=mode, stage="user", script=script, argv=(label,), label=label),  # one question a label
        outcome=passing(seconds),
        cached=cached,
    )


def printer_with_clock(verbose=False):
    lines, clock = [], FakeClock()
    printer = Printer(verbose, quiet=False, sink=lines.append)
    printer.tally = Tally(clock=clock)
    return printer, lines, clock


def test_every_trial_and_second_is_counted_by_phase():
    """Trials after the verdict count too (minify, the repro's checks, the evidence after it); a question the
    journal answered (a resumed run's) is counted apart; seconds run from the command's start to the summary."""
    printer, lines, clock = printer_with_clock()
    printer("run_dir", path="/r")
    trial(printer, "baseline-no-compile", 1.0)
    trial(printer, "original", 2.0)
    clock.now += 40.0
    printer("ladder_start", stages=["inductor"])
    trial(printer, "stage-eager", 0.5, cached=True)
    trial(printer, "stage-inductor", 2.0)
    clock.now += 5.0
    for name, trials, seconds in (
        ("subsystems", 4, 20.0),
        ("minify", 12, 85.0),
        ("repro", 3, 30.5),
        ("evidence", 2, 10.0),
        ("pack", 0, 1.2),
    ):
        printer("phase", name=name)
        for i in range(trials):  # a capture run of the script, then graph trials; the repro's own runs
            trial(
                printer,
                f"{name}-{i}",
                1.0,
                mode="script"
                if i == 0 and name == "minify"
                else "repro"
                if name == "repro"
                else "graph"
                if name in ("minify", "subsystems")
                else "script",
            )
        clock.now += seconds
    assert lines == [
        "run folder /r",
        "· start: the script as written and without compile, side by side (at 0:00)",
        "· ladder: which compiler stage fails (at 0:40)",
        "· subsystems: torch's pass and lowering counters (at 0:45)",
        "· minify: capturing and cutting the failing graph (at 1:05)",
        "· repro: writing repro.py and checking it in fresh interpreters (at 2:30)",
        "· evidence: after the repro: the boundary's re-run, config flips, torch's logs (at 3:00)",
        "· pack: the tarball (at 3:10)",
    ]
    assert tally_table(printer.tally).splitlines() == [
        "phase       trials  script  journal  seconds",
        "----------  ------  ------  -------  -------",
        "start            2       2        0     40.0",
        "ladder           1       1        1      5.0",
        "subsystems       4       0        0     20.0",
        "minify          12       1        0     85.0",
        "repro            3       0        0     30.5",
        "evidence         2       2        0     10.0",
        "pack             0       0        0      1.2",
        "all             24       6        1    191.7",
    ]


def test_a_phase_entered_again_is_one_row_and_the_minify_event_is_no_new_phase():
    printer, lines, clock = printer_with_clock()
    printer("phase", name="minify")
    clock.now += 3.0
    printer("minify_start", graph=0, nodes=41)  # announced already by the "minify" phase: no second line
    clock.now += 2.0
    printer("phase", name="pack")
    clock.now += 1.0
    printer("phase", name="minify")
    clock.now += 1.0
    assert lines == [
        "· minify: capturing and cutting the failing graph (at 0:00)",
        "  minifying graph 0 (41 nodes) ...",
        "· pack: the tarball (at 0:05)",
        "· minify: capturing and cutting the failing graph (at 0:06)",
    ]
    assert tally_table(printer.tally).splitlines()[2:] == [
        "minify       0       0      6.0",
        "pack         0       0      1.0",
        "all          0       0      7.0",
    ]


def test_trial_lines_and_the_trials_running_where_the_runner_reports_starts():
    """Off a terminal a trial's line needs -v; the live display asks for them always (trial_lines). Where the
    runner says when a trial starts ("trial_start"), the tally knows how many run."""
    printer, lines, _ = printer_with_clock()
    trial(printer, "original", 2.0)
    assert lines == []
    printer, lines, _ = printer_with_clock(verbose=True)
    spec = TrialSpec(mode="script", stage="user", label="original")
    printer("trial_start", spec=spec)
    printer("trial_start", spec=spec)
    assert printer.tally.running == 2
    trial(printer, "original", 2.0)
    assert printer.tally.running == 1
    assert lines == ["    · original                               pass         2.0 s  passes"]


def test_an_original_run_that_passes_or_never_compiles_is_not_marked_failing():
    printer, lines, _ = printer_with_clock()
    printer("original", outcome=Outcome(kind="pass", signature=Signature(kind="pass"), seconds=1.5))
    printer(
        "original",
        outcome=Outcome(
            kind="pass", signature=Signature(kind="pass"), seconds=1.5, compiled=True, user_backend="inductor"
        ),
    )
    assert lines == [
        "  · original run (no torch.compile call) passes" + " " * 57 + "1.5 s",
        "  · original run (inductor)      passes" + " " * 57 + "1.5 s",
    ]


def test_a_stage_that_fails_inside_dynamos_wrapper_names_the_error_inside():
    """Dynamo's "RuntimeError when making fake tensor call" is the same for every error it holds (issue 50)."""
    printer, lines, _ = printer_with_clock()
    wrapper = Signature(
        "exception",
        "TorchRuntimeError",
        "RuntimeError when making fake tensor call",
        inner="TypeError: 'int' object is not callable",
        inner_text="TypeError: 'int' object is not callable",
        text="RuntimeError when making fake tensor call",
    )
    printer("stage", stage="eager", outcome=Outcome(kind="exception", signature=wrapper, seconds=0.8), same=False)
    assert lines == [
        "  ✗ dynamo (backend=eager)       TypeError: 'int' object is not callable" + " " * 22 + "  0.8 s  (a different "
        "failure)"
    ]


@pytest.mark.slow
def test_the_quick_start_under_a_terminal_is_never_silent_for_more_than_2_s(tmp_path):
    """`reprokit bisect examples/relu_bug.py` at a terminal: some output at least every 2 s from start to exit (the
    live display's ticker), and the summary at the end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    code, chunks, ended = record(
        [sys.executable, "-m", "reprokit.cli", "bisect", "examples/relu_bug.py", "--output-dir", str(tmp_path / "out")],
        env,
        str(ROOT),
    )
    text = b"".join(c for _, c in chunks).decode("utf-8", "replace")
    assert code == 0, text[-3000:]
    assert longest_silence(chunks, ended) <= 2.0, [round(b[0] - a[0], 1) for a, b in zip(chunks, chunks[1:])]
    assert "failing stage              inductor" in text and "minifying graph 0" in text
    summary = text[text.index("\nphase ") :].replace("\r\n", "\n")
    assert re.search(r"^all( +\d+)+ +\d+\.\d$", summary, re.M), summary  # every trial and second, by phase
    assert "0:0" in text  # the status line's elapsed time was drawn


def test_the_summary_says_where_test_repro_py_went():
    """test_repro.py runs once in a plain interpreter, not as a trial: the summary says its seconds are the repro
    phase's."""
    from reprokit.cli_summary import summary_table
    from reprokit.data.verdict import Verdict

    printer, _, clock = printer_with_clock()
    printer("phase", name="repro")
    trial(printer, "verify-repro-0", 2.0, script="/run/repro.py")  # a script, but not the user's: not counted
    clock.now += 9.0
    v = Verdict.from_dict(
        dict(script="s.py", argv=[], failing_stage="inductor", trials=4, seconds=20.0, test_repro_seconds=6.3)
    )
    assert summary_table(v, printer.tally).splitlines()[-7:] == [
        "verdict after              4 trials, 20.0 s",
        "",
        "phase  trials  script  seconds",
        "-----  ------  ------  -------",
        "repro       1       0      9.0",
        "all         1       0      9.0",
        "repro's seconds include one run of test_repro.py: 6.3 s",
    ]
