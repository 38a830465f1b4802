"""No trial outlives reprokit, however reprokit ends: SIGKILL reprokit while its trials hang, and every trial's
process group is gone within seconds (trial/reaper.py). Real processes: the CLI, its warm worker, its trials."""

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).parent.parent

# Never ends, compiled or not: every trial of the first round (baseline, original, stages) hangs here.
ENDLESS = """import tempfile
import torch

f = torch.compile(lambda x: x + 1)
tempfile.mkstemp(prefix="endless-")  # in the trial's temporary folder, which must go with the trial
print("looping", flush=True)
while True:
    pass
"""


def _processes() -> dict:
    """pid -> (ppid, pgid) of every process on the machine."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            found[int(name)] = (int(fields[1]), int(fields[2]))  # after the name: state, ppid, pgrp
    return found


def _descendants(root: int) -> dict:
    """pid -> pgid of every process under root."""
    table = _processes()
    out, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, pgid) in table.items():
            if ppid == parent and pid not in out:
                out[pid] = pgid
                frontier.append(pid)
    return out


def _wait_for_looping_trial(artifacts: pathlib.Path, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, "reprokit ended before any trial started"
        if any("looping" in p.read_text(errors="replace") for p in artifacts.rglob("stdout.txt")):
            return
        time.sleep(0.5)
    pytest.fail("no trial reached its endless loop")


def _run_env(tmp_path, **extra) -> dict:
    """reprokit's environment, with a temporary folder of its own (tmp_path / "tmp")."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path / "tmp"), **extra}


def _tmp_left_after(tmp_path, seconds: float) -> list:
    """What is left in reprokit's temporary folder after up to `seconds` (the reaper removes it after the kill), but
    inductor's default cache (`torchinductor_<user>`), which any compile of the user's makes there too."""
    deadline = time.monotonic() + seconds
    while True:
        left = sorted(p.name for p in (tmp_path / "tmp").iterdir() if not p.name.startswith("torchinductor_"))
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _left_after(trials: dict, seconds: float) -> set:
    """The processes of these trials (pid -> pgid) still alive after up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        left = {pid for pid, (_, pgid) in _processes().items() if pgid in trials.values() or pid in trials}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("warm", ["1", "0"], ids=["warm-forks", "cold"])
def test_sigkill_of_reprokit_takes_every_trial_group_down(tmp_path, warm):
    (tmp_path / "endless.py").write_text(ENDLESS)
    artifacts = tmp_path / "artifacts"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprokit.cli",
            "bisect",
            "endless.py",
            "--timeout",
            "600",
            "--no-pack",
            "--no-minify",
            "-o",
            str(artifacts),
        ],
        cwd=tmp_path,
        env=_run_env(tmp_path, REPROKIT_WARM=warm),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    trials: dict = {}
    try:
        _wait_for_looping_trial(artifacts, proc, 240)
        trials = {pid: pgid for pid, pgid in _descendants(proc.pid).items() if pgid != proc.pid}
        assert trials, "the looping trial is not among reprokit's processes"
        made = [p for p in (tmp_path / "tmp").rglob("endless-*")]
        assert made and all(p.parent.name.startswith("reprokit-tmp-") for p in made), made
        os.kill(proc.pid, signal.SIGKILL)  # no handler runs: only the kernel's EOF on the reaper's pipe
        proc.wait()
        left = _left_after(trials, 5)
        assert not left, f"trial processes outlived reprokit: {sorted(left)}"
        assert _tmp_left_after(tmp_path, 5) == []  # the trials' folders and the warm worker's socket
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pgid in set(trials.values()) | set(_descendants(proc.pid).values()):  # a failed test leaves nothing
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


@pytest.mark.slow
def test_ctrl_c_stops_the_trials_running_without_waiting_them_out(tmp_path):
    """Ctrl-C while the first round's trials loop: reprokit ends within seconds, not at their 600 s limit (it
    waited them out: CI at 9efb38b, a SLURM round's jobs held an interrupted run over 120 s), no trial process is
    left, and none of the killed trials is journaled as an answer (a resumed run asks them again)."""
    (tmp_path / "endless.py").write_text(ENDLESS)
    artifacts = tmp_path / "artifacts"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprokit.cli",
            "bisect",
            "endless.py",
            "--timeout",
            "600",
            "--no-pack",
            "--no-minify",
            "-o",
            str(artifacts),
        ],
        cwd=tmp_path,
        env=_run_env(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # Ctrl-C as at a terminal: a suite started in the background inherits SIGINT ignored
        # (CI run from `cmd &` at 214dd42: both Ctrl-C tests timed out), and so would reprokit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    trials: dict = {}
    try:
        _wait_for_looping_trial(artifacts, proc, 240)
        trials = {pid: pgid for pid, pgid in _descendants(proc.pid).items() if pgid != proc.pid}
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - started
        said = err.splitlines()[-1] if err else ""  # cli_signals: no more click's "Aborted!", exit 1
        assert proc.returncode == 130 and said.startswith("reprokit: interrupted (SIGINT): "), err[-2000:]
        assert took < 15, took
        left = _left_after(trials, 5)  # the reaper, in a session of its own, ends at its pipe's EOF
        assert not left, f"trial processes outlived Ctrl-C: {sorted(left)}"
        assert _tmp_left_after(tmp_path, 5) == []
        journal = next(artifacts.glob("*/journal.jsonl"), None)
        answered = [line for line in (journal.read_text().splitlines() if journal else [])]
        assert answered == [], answered
    finally:
        for pgid in set(trials.values()) | {proc.pid}:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
