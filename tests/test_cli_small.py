"""Issue 45's small items, as a user sees them: numbers no run can use, a file passed as a capture folder, ranks
with a capture, the first phase of a bisect from a capture, the live line at 80 columns, the journal's answers
said once, and the minify line's trials counted as the phase table counts them."""

import json

import pytest
import torch
from click.testing import CliRunner

from reprokit.cli import main


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
