"""bisect --from-capture takes every option bisect takes: those that apply reach the run (its run.json and
verdict.json), and those that cannot apply to a captured graph are refused in one line, exit 2."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from reprokit.cli import main

CASES = pathlib.Path(__file__).parent / "capture_cases"


def cli(*args):
    """`reprokit ARGS` in this process: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, list(args), prog_name="reprokit", terminal_width=80)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "flags, why",
    [
        (
            ("--repeat", "3"),
            "replays the captured failure; drop --repeat (it measures how often a run of the script fails)",
        ),
        (
            ("--check-accuracy",),
            "bisects the failure the capture recorded; drop --check-accuracy and capture the job with reprokit "
            "capture --check-accuracy",
        ),
        (("--max-input-bytes", "0"), "replays the inputs the capture kept; drop --max-input-bytes"),
        (
            ("--kind", "slow"),
            "bisects the failure a capture recorded; drop --kind (a slowdown is bisected from its script)",
        ),
        (("--slow-threshold", "20"), "bisects the failure a capture recorded; drop --slow-threshold"),
        (
            ("--versions",),
            "runs no script; drop --versions and run reprokit versions RUN_DIR on the finished run folder",
        ),
    ],
)
def test_an_option_a_capture_cannot_take_is_one_line_exit_2(tmp_path, flags, why):
    code, out, err = cli("bisect", "--from-capture", str(tmp_path), *flags)
    assert (code, out, err) == (2, "", f"reprokit: --from-capture {why}\n")


@pytest.mark.skipif(shutil.which("sbatch") is not None, reason="SLURM's commands are here: the check passes")
def test_executor_slurm_is_checked_not_ignored(tmp_path):
    # Before issue 49 a capture's bisect ran its trials locally without a word.
    code, out, err = cli("bisect", "--from-capture", str(tmp_path), "--executor", "slurm", "--slurm-partition", "p")
    assert (code, out) == (2, "")
    assert err == "reprokit: --executor slurm: no sbatch on PATH (run reprokit where SLURM's commands are)\n"


@pytest.mark.slow
def test_every_option_that_applies_reaches_the_run(tmp_path):
    """The one cover of its class (about 160 s on shared cores): a capture, then its bisect with every option that
    applies changed from its default, each read back from the run folder."""
    work = tmp_path / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    capture = tmp_path / "cap"
    done = subprocess.run(
        [sys.executable, "-m", "reprokit.cli", "capture", "-o", str(capture), "--", sys.executable, "relu_job.py"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # the job's own exit status
    flags = ("--no-configs", "--no-subsystems", "--no-minify", "--no-pack", "--executor", "local")
    flags += ("--timeout", "300", "--jobs", "2", "--budget", "1h", "-o", str(tmp_path / "art"), "--json")
    code, out, err = cli("bisect", "--from-capture", str(capture), *flags)
    assert code == 0, err
    v = json.loads(out)
    run = json.loads(open(os.path.join(v["run_dir"], "run.json")).read())
    options = run["options"]
    assert (options["timeout"], options["jobs"], options["configs"], options["subsystems"]) == (300.0, 2, False, False)
    assert run["steps"] == {"minify": False, "pack": False, "budget": 3600.0}
    assert run["executor"]["name"] == "local"
    assert os.path.dirname(v["run_dir"]) == str(tmp_path / "art")
    assert v["budget"]["seconds"] == 3600.0 and v["budget"]["spent"] is False
    assert v["repro"] is None and v["tarball"] is None  # --no-minify, --no-pack
    assert v["config"] is None and v["subsystem"] is None  # --no-configs, --no-subsystems
