"""Issue 45's small items, as a user sees them: numbers no run can use, a file passed as a capture folder, ranks
with a capture, the first phase of a bisect from a capture, the live line at 80 columns, the journal's answers
said once, and the minify line's trials counted as the phase table counts them."""

import io
import json

import pytest
import torch
from click.testing import CliRunner
from rich.console import Console

from reprokit.cli import main
from reprokit.cli_live import Status
from reprokit.cli_render import Printer
from reprokit.cli_tally import Tally, tally_table
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.signature import Signature


def reprokit(*args):
    """`reprokit ARGS` in this process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, list(args), prog_name="reprokit", terminal_width=80)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text("import torch\n")
    return tmp_path


def test_numbers_no_run_can_use_are_one_line_and_exit_2(in_tmp):
    """Before, --jobs 0 ran no trial at once and --timeout 0 read as "no limit given"; nothing is made or run."""
    cases = [
        (["bisect", "s.py", "--jobs", "0"], "--jobs takes a number of trials at once, 1 or more (got 0)"),
        (["bisect", "s.py", "-j", "-2"], "--jobs takes a number of trials at once, 1 or more (got -2)"),
        (["bisect", "s.py", "--timeout", "0"], "--timeout takes seconds per trial, more than 0 (got 0)"),
        (["bisect", "s.py", "--timeout", "nan"], "--timeout takes seconds per trial, more than 0 (got nan)"),
        (["bisect", "s.py", "--timeout", "inf"], "--timeout takes seconds per trial, more than 0 (got inf)"),
        (["bisect", "s.py", "--repeat", "0"], "--repeat takes a number of runs, 1 or more (got 0)"),
        (["bisect", "s.py", "--max-input-bytes", "-1"], "--max-input-bytes takes a size in bytes, 0 or more (got -1)"),
        (["bisect", "s.py", "--slow-threshold", "-5"], "--slow-threshold takes a percent, 0 or more (got -5)"),
        (["bisect", "s.py", "--nproc-per-node", "0"], "--nproc-per-node takes a number of ranks, 1 or more (got 0)"),
        (["bisect", "s.py", "--budget", "0"], "--budget must be more than 0 seconds (got '0')"),
        (
            ["bisect", "--from-capture", str(in_tmp), "-j", "0"],
            "--jobs takes a number of trials at once, 1 or more (got 0)",
        ),
        (["doctor", "s.py", "--timeout", "-1"], "--timeout takes seconds per run, more than 0 (got -1)"),
        (["doctor", "s.py", "--nproc-per-node", "0"], "--nproc-per-node takes a number of ranks, 1 or more (got 0)"),
        (
            ["capture", "-o", "cap", "--max-input-bytes", "-3", "--", "true"],
            "--max-input-bytes takes a size in bytes, 0 or more (got -3)",
        ),
        (
            ["capture", "-o", "cap", "--max-graph-input-bytes", "-1", "--", "true"],
            "--max-graph-input-bytes takes a size in bytes, 0 or more (got -1)",
        ),
        (["models", "--tensor-parallel-gpus", "0"], "--tensor-parallel-gpus takes a number of GPUs, 1 or more (got 0)"),
        (["pack", "--model", "llama7b", "--layers", "0"], "--layers takes a number of layers, 1 or more (got 0)"),
        (
            ["pack", "--model", "llama7b", "--sequence-length", "0"],
            "--sequence-length takes a number of tokens, 1 or more (got 0)",
        ),
        (["pack", "--model", "llama7b", "--batch-size", "0"], "--batch-size takes a batch size, 1 or more (got 0)"),
        (
            ["pack", "--model", "llama7b", "--tensor-parallel-gpus", "0"],
            "--tensor-parallel-gpus takes a number of GPUs, 1 or more (got 0)",
        ),
        (
            ["pack", "--model", "llama7b", "--timeout", "0"],
            "--timeout takes seconds for the compile attempt, more than 0 (got 0)",
        ),
    ]
    for args, line in cases:
        assert reprokit(*args) == (2, "", f"reprokit: {line}\n"), args
    assert sorted(p.name for p in in_tmp.iterdir()) == ["s.py"]  # no run folder, no capture folder


def capture_folder(root):
    """A capture folder as the recorder leaves it (its case's files stand-ins: read before they matter)."""
    (root / "rank0" / "case").mkdir(parents=True)
    (root / "capture.json").write_text(json.dumps({"torch_version": torch.__version__, "ranks": {"0": {}}}))
    (root / "rank0" / "failure.json").write_text(json.dumps({"graph": 0, "signature": {"kind": "crash"}}))
    return root


def test_a_file_passed_as_the_capture_folder_is_named_a_file(in_tmp):
    """Before: "no such capture folder: cap/capture.json; capture the job first: reprokit capture --output-dir
    cap/capture.json -- CMD". A file of a capture names its folder; any other file, what to pass."""
    cap = capture_folder(in_tmp / "cap")
    for given in ("cap/capture.json", "cap/rank0/failure.json"):
        assert reprokit("bisect", "--from-capture", given) == (
            2,
            "",
            f"reprokit: {given} is a file, not a capture folder; pass the folder reprokit capture wrote: "
            f"reprokit bisect --from-capture {cap}\n",
        )
    assert reprokit("bisect", "--from-capture", "s.py") == (
        2,
        "",
        "reprokit: s.py is a file, not a capture folder; pass the folder reprokit capture wrote (its --output-dir)\n",
    )


def test_a_capture_with_ranks_is_one_line_and_exit_2(in_tmp):
    capture_folder(in_tmp / "cap")
    assert reprokit("bisect", "--from-capture", "cap", "--nproc-per-node", "8") == (
        2,
        "",
        "reprokit: --from-capture replays the failing rank's graph in one process: drop --nproc-per-node 8 "
        "(torchrun's job was captured already)\n",
    )


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def printer_with_clock(verbose=True):
    lines, clock = [], FakeClock()
    printer = Printer(verbose, quiet=False, sink=lines.append)
    printer.tally = Tally(clock=clock)
    return printer, lines, clock


def trial(printer, label, seconds, cached=False, kind="crash", question=None):
    """A trial event; `question` names what was asked (the label, unless the bisect asks it again by another)."""
    signature = Signature(kind=kind, exc_type="SIGABRT", message="killed by SIGABRT") if kind == "crash" else None
    printer(
        "trial",
        spec=TrialSpec(mode="graph", stage="inductor", case=question or label, label=label),
        outcome=Outcome(kind=kind, signature=signature or Signature(kind="pass"), seconds=seconds),
        cached=cached,
    )


def test_the_first_phase_of_a_bisect_from_a_capture_is_named_for_what_it_does():
    """No script runs before the ladder of a capture: its first phase is not "the script as written..."."""
    printer, lines, clock = printer_with_clock()
    clock.now += 7.0  # torch imported, the capture read and copied: the phase began with the command
    printer("run_dir", path="/r", phase="capture")
    clock.now += 2.0
    printer("ladder_start", stages=["inductor"])
    assert lines == [
        "run folder /r",
        "· capture: reading the captured graph and its failure (the job is not run) (at 0:00)",
        "· ladder: which compiler stage fails (at 0:09)",
    ]
    assert tally_table(printer.tally).splitlines()[2] == "capture       0       0      9.0"


def test_a_trial_answered_from_the_journal_is_listed_and_counted_once():
    """A question asked again (lowerings-max9 to name the application; a resumed run's trials, asked again by
    minify) was listed, and counted as reused, each time; now where first asked only."""
    printer, lines, clock = printer_with_clock()
    printer("phase", name="subsystems")
    trial(printer, "lowerings-max9", 7.9)
    trial(printer, "lowerings-max8", 6.5, kind="pass")
    trial(printer, "lowerings-max9", 7.9, cached=True)
    printer("phase", name="minify")
    trial(printer, "graph-alone", 7.2, cached=True)  # resumed: run by the run before
    trial(printer, "minify-9n", 6.0, cached=True)
    trial(printer, "minify-9n", 6.0, cached=True)
    trial(printer, "graph-alone", 7.2, cached=True, question="graph-alone")
    clock.now += 3.0
    assert [line.split()[1] + (" (journal)" if "(journal)" in line else "") for line in lines if "    · " in line] == [
        "lowerings-max9",
        "lowerings-max8",
        "graph-alone (journal)",
        "minify-9n (journal)",
    ]
    assert tally_table(printer.tally).splitlines() == [
        "phase       trials  script  journal  seconds",
        "----------  ------  ------  -------  -------",
        "subsystems       2       0        0      0.0",
        "minify           0       0        2      3.0",
        "all              2       0        2      3.0",
    ]


def test_the_minify_line_counts_its_trials_as_the_phase_table_does():
    """Before: "41 → 3 nodes in 10 trials" (both phases, the journal's left out) above a table of minify 8
    trials, 3 reused, and repro 2."""
    printer, lines, clock = printer_with_clock(verbose=False)
    printer("phase", name="minify")
    trial(printer, "graph-alone", 7.2, cached=True)
    printer("minify_start", graph=0, nodes=41)
    for i in range(8):
        trial(printer, f"minify-{i}", 6.0)
    trial(printer, "minify-9n", 6.0, cached=True)
    printer("phase", name="repro")
    trial(printer, "repro-parts", 0.5, kind="pass")
    trial(printer, "verify-repro-0", 27.0)
    clock.now += 63.0
    printer("minified", before=41, after=3, trials=10, seconds=63.3, verified=True)
    assert lines[-1] == (
        "  minified graph 41 → 3 nodes, 63.3 s: minify 8 trials (and 2 from the journal), repro 2 trials; "
        "repro.py verified in a fresh process"
    )
    assert tally_table(printer.tally).splitlines()[2:4] == [
        "minify       8       0        2      0.0",
        "repro        2       0        0     63.0",
    ]


def test_the_live_line_keeps_the_trials_and_the_elapsed_time_at_80_columns():
    """rich cut the line's end: at 80 columns, "evidence: after the repro: the boundary's re-run, config flips,
    torch's logs · 2 running · 12 trials d…"; now the phase's words are cut instead."""
    printer, _, clock = printer_with_clock()
    printer("phase", name="evidence")
    for i in range(12):
        trial(printer, f"config-{i}", 1.0, kind="pass")
    printer("trial_start", spec=TrialSpec(mode="graph", stage="inductor", label="config-all"))
    printer("trial_start", spec=TrialSpec(mode="graph", stage="inductor", label="lowerings-max8"))
    clock.now += 3723.0
    shown = {}
    for width in (80, 120):
        console = Console(width=width, file=io.StringIO(), force_terminal=True, color_system=None)
        console.print(Status(printer.tally))
        shown[width] = console.file.getvalue().splitlines()[0][2:]  # after the spinner
    assert shown[80] == "evidence: after the repro: the… · 2 running · 12 trials done · 1:02:03 elapsed"
    assert shown[120] == (
        "evidence: after the repro: the boundary's re-run, config flips, torch'… · 2 running · 12 trials done · "
        "1:02:03 elapsed"
    )
    assert [len(shown[w]) for w in shown] == [80 - 2, 120 - 2]  # the terminal's width, the spinner's cells aside
