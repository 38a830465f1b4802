"""A signal ends a run cleanly (cli_signals): SIGINT, SIGTERM or SIGHUP while a real `reprokit bisect`'s trials run
kills every trial within seconds, prints one line naming the run folder and the command that resumes it, exits
130, 143 or 129; and `--resume` of that folder goes on from its journal. Real processes, the real compiler (CPU)."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from test_reaper import _descendants, _processes, _run_env


@pytest.fixture(autouse=True)
def signals_as_a_terminal_sends_them():
    """A suite started under nohup, or with `&` from a script, ignores SIGHUP or SIGINT, and reprokit keeps a signal
    its process was started ignoring (cli_signals): these tests are about a terminal's signals, so each starts from
    their default handling, which its subprocesses inherit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)}
    for s, old in before.items():
        if old is signal.SIG_IGN:
            signal.signal(s, signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    yield
    for s, old in before.items():
        signal.signal(s, old)


# Its first `free` runs (two: the first round, the script as written and without compile) end at once; every later
# one waits while HOLD exists, so the signal finds the ladder's trials running and two answers in the journal. Under
# compile it fails the same way in every stage: the fake kernel Dynamo calls raises.
HELD = """import os
import time
import uuid

import torch

RUNS, HOLD = {runs!r}, {hold!r}
os.makedirs(RUNS, exist_ok=True)
open(os.path.join(RUNS, uuid.uuid4().hex), "w").close()
if len(os.listdir(RUNS)) > {free} and os.path.exists(HOLD):
    print("holding", flush=True)
    while os.path.exists(HOLD):
        time.sleep(0.1)


@torch.library.custom_op("rk::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    raise RuntimeError("the fake kernel of rk::twice is broken")


@torch.compile
def f(x):
    return twice(x).cos() + 1


print(f(torch.randn(4)))
"""
QUICK = ["--no-configs", "--no-subsystems", "--no-minify", "--no-pack"]


def held_project(tmp_path, free: int = 2) -> pathlib.Path:
    """held.py in tmp_path: its first `free` runs end at once, the later ones wait while tmp_path / "hold" exists."""
    (tmp_path / "hold").touch()
    runs, hold = str(tmp_path / "runs"), str(tmp_path / "hold")
    (tmp_path / "held.py").write_text(HELD.format(runs=runs, hold=hold, free=free))
    return tmp_path


def start(tmp_path, *args, warm: str = "1") -> subprocess.Popen:
    """reprokit in a session of its own, SIGINT at its default as at a terminal (a suite started in the background
    inherits it ignored, and reprokit keeps an ignored signal ignored)."""
    return subprocess.Popen(
        [sys.executable, "-m", "reprokit", *args],
        cwd=tmp_path,
        env=_run_env(tmp_path, REPROKIT_WARM=warm),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_held_trial(artifacts: pathlib.Path, proc: subprocess.Popen, seconds: float = 240) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        if any("holding" in p.read_text(errors="replace") for p in artifacts.rglob("stdout.txt")):
            return
        time.sleep(0.3)
    pytest.fail("no trial reached the hold")


def interrupt(proc: subprocess.Popen, signum: int) -> tuple:
    """Send the signal once a trial holds; (exit code, stderr, seconds to exit, trial processes left 5 s after the
    signal: pid -> pgid of every process under reprokit but itself, as they were when it was sent)."""
    trials = {pid: pgid for pid, pgid in _descendants(proc.pid).items() if pgid != proc.pid}
    assert trials, "no trial process under reprokit"
    os.kill(proc.pid, signum)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    while True:
        left = {pid for pid, (_, pgid) in _processes().items() if pid in trials or pgid in trials.values()}
        if not left or time.monotonic() > sent + 5:
            return proc.returncode, err, took, left


def resume_line(name: str, run: pathlib.Path) -> str:
    return f"reprokit: interrupted ({name}): what was found is in {run}; resume with: reprokit bisect --resume {run}"


def finish(tmp_path, run: pathlib.Path) -> None:
    """The hold lifted, `--resume` answers the first round from the journal and isolates the failure."""
    (tmp_path / "hold").unlink()
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", "--resume", str(run), "--json"],
        cwd=tmp_path,
        env=_run_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert "resuming: 2 finished trials in the journal are not run again" in p.stderr, p.stderr
    assert json.loads(p.stdout)["failing_stage"] == "eager"


@pytest.mark.slow
@pytest.mark.parametrize(
    "signum, code, warm",
    [(signal.SIGINT, 130, "1"), (signal.SIGTERM, 143, "1"), (signal.SIGHUP, 129, "0")],
    ids=["SIGINT", "SIGTERM", "SIGHUP-cold"],
)
def test_signal_stops_the_trials_says_how_to_resume_and_resume_goes_on(tmp_path, signum, code, warm):
    held_project(tmp_path)
    artifacts = tmp_path / "artifacts"
    proc = start(tmp_path, "bisect", "held.py", *QUICK, "--timeout", "600", "-o", str(artifacts), warm=warm)
    try:
        wait_for_held_trial(artifacts, proc)
        returncode, err, took, left = interrupt(proc, signum)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    (run,) = artifacts.glob("*-held")
    assert (returncode, err.splitlines()[-1]) == (code, resume_line(signal.Signals(signum).name, run)), err
    assert took < 5, took
    assert not left, f"trial processes outlived the signal by 5 s: {sorted(left)}"
    assert len((run / "journal.jsonl").read_text().splitlines()) == 2  # the first round's; no killed trial
    finish(tmp_path, run)


@pytest.mark.slow
def test_a_resumed_run_interrupted_again_says_the_same(tmp_path):
    """SIGTERM in `bisect --resume`: the same line, the same folder; the journal still holds what was found."""
    held_project(tmp_path)
    artifacts = tmp_path / "artifacts"
    procs = [start(tmp_path, "bisect", "held.py", *QUICK, "--timeout", "600", "-o", str(artifacts))]
    try:
        wait_for_held_trial(artifacts, procs[0])
        interrupt(procs[0], signal.SIGTERM)
        (run,) = artifacts.glob("*-held")
        for out in run.rglob("stdout.txt"):  # the killed trial's "holding": the resumed run's must be its own
            out.unlink()
        procs.append(start(tmp_path, "bisect", "--resume", str(run)))
        wait_for_held_trial(artifacts, procs[1])
        returncode, err, took, left = interrupt(procs[1], signal.SIGTERM)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
    assert (returncode, err.splitlines()[-1]) == (143, resume_line("SIGTERM", run)), err
    assert took < 5 and not left, (took, left)
    finish(tmp_path, run)


@pytest.mark.slow
def test_sigterm_ends_doctor_and_its_runs(tmp_path):
    """doctor has no resume: the same exit code, the line names its folder, and no run of the script is left."""
    held_project(tmp_path, free=0)
    artifacts = tmp_path / "artifacts"
    proc = start(tmp_path, "doctor", "held.py", "--timeout", "600", "-o", str(artifacts))
    try:
        wait_for_held_trial(artifacts, proc)
        returncode, err, took, left = interrupt(proc, signal.SIGTERM)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    (run,) = artifacts.glob("*-held")
    assert (returncode, err.splitlines()[-1]) == (143, f"reprokit: interrupted (SIGTERM): what was found is in {run}")
    assert took < 5 and not left, (took, left)


@pytest.fixture
def slurm(request):
    """The cluster when one answers here already; else test_slurm's fixture (scripts/slurm-up, or a skip)."""
    if subprocess.run(["sinfo", "-h"], capture_output=True).returncode if shutil.which("sinfo") else 1:
        request.getfixturevalue("slurm_cluster")


@pytest.mark.slow
def test_sigterm_cancels_the_runs_slurm_jobs(tmp_path, slurm):
    """A scheduler's time limit or `scancel` of the driver sends SIGTERM: none of the run's jobs is left in squeue 5
    s after it (they ran on to COMPLETED before), and the line says how to resume."""
    from test_slurm import our_jobs, project

    work = project(tmp_path, "relu_compile_error.py", "_blocks.py")
    shared = tmp_path / "shared"
    proc = start(work, "bisect", "relu_compile_error.py", *QUICK, "--executor", "slurm", "-o", str(shared))
    try:
        deadline = time.monotonic() + 180
        while not (our_jobs(tmp_path) and list(shared.glob("*-relu_compile_error"))) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        assert our_jobs(tmp_path), "no trial job was ever queued"
        os.kill(proc.pid, signal.SIGTERM)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        while our_jobs(tmp_path) and time.monotonic() < sent + 5:  # scancel's CANCELLING shows for a moment
            time.sleep(0.2)
        left = our_jobs(tmp_path)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    (run,) = shared.glob("*-relu_compile_error")
    assert (proc.returncode, err.splitlines()[-1]) == (143, resume_line("SIGTERM", run)), err
    assert left == [], left


def test_each_command_names_what_goes_on_from_where_it_stopped():
    from reprokit.cli_signals import Interrupted, interrupted_line

    def said(signum, command, run_dir=None, **kwargs):
        e = Interrupted(signum)
        e.run_dir = run_dir
        return interrupted_line(e, command, kwargs)

    assert said(signal.SIGTERM, "minify", run_dir="/runs/a b") == (
        "interrupted (SIGTERM): what was found is in /runs/a b; resume with: reprokit minify '/runs/a b' --resume"
    )
    assert said(signal.SIGINT, "bisect", "/runs/c", capture_dir="/cap") == (
        "interrupted (SIGINT): what was found is in /runs/c; start it again with: reprokit bisect --from-capture /cap"
    )
    assert said(signal.SIGHUP, "doctor", "/runs/d") == "interrupted (SIGHUP): what was found is in /runs/d"
    assert said(signal.SIGINT, "bisect") == "interrupted (SIGINT)"  # before its run folder was made
    assert Interrupted(signal.SIGHUP).exit_code == 129


def test_a_signal_started_ignored_stays_ignored():
    """Under nohup SIGHUP is ignored, and `cmd &` ignores SIGINT: reprokit must not end on them there."""
    from reprokit.cli_signals import ending_on_signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with ending_on_signals(lambda: None):
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.fixture
def in_process(monkeypatch):
    """The signal's hard exit recorded, not taken: [(code, seconds after the fixture started)], and each call
    releases the stop() of a test that holds it (the `release` event)."""
    from reprokit import cli_signals

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("only the main thread may set signal handlers")
    left, release, t0 = [], threading.Event(), time.monotonic()

    def leave(code):
        left.append((code, time.monotonic() - t0))
        release.set()

    monkeypatch.setattr(cli_signals, "_leave", leave)
    return left, release


def test_sigterm_stops_off_the_main_thread_and_raises_interrupted(in_process):
    from reprokit.cli_signals import SIGNALS, Interrupted, ending_on_signals

    before = {s: signal.getsignal(s) for s in SIGNALS}
    ran = []
    with pytest.raises(Interrupted) as e:
        with ending_on_signals(lambda: ran.append(threading.current_thread())):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises in here
    assert (e.value.name, e.value.exit_code) == ("SIGTERM", 143)
    assert len(ran) == 1 and ran[0] is not threading.main_thread()
    assert {s: signal.getsignal(s) for s in SIGNALS} == before
    assert in_process[0] == []  # GRACE (20 s) has not passed


def test_the_exit_is_armed_before_stop_and_waits_for_it_only_so_long(in_process, monkeypatch):
    """stop() that never returns (a scancel that hangs): the command ends after STOP_WAIT, the process by GRACE."""
    from reprokit import cli_signals

    left, release = in_process
    monkeypatch.setattr(cli_signals, "STOP_WAIT", 0.3)
    monkeypatch.setattr(cli_signals, "GRACE", 1.0)
    t0 = time.monotonic()
    with pytest.raises(cli_signals.Interrupted):
        with cli_signals.ending_on_signals(release.wait):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)
    assert 0.3 <= time.monotonic() - t0 < 1.0
    assert release.wait(5)
    assert [code for code, _ in left] == [129]


def test_a_second_signal_while_stop_runs_ends_at_once_with_its_code(in_process, monkeypatch):
    """The documented way out when the cancel takes long: a second Ctrl-C during the wait, not "Aborted!"."""
    from reprokit import cli_signals

    left, release = in_process
    stopping = threading.Event()

    def stop():
        stopping.set()
        release.wait(30)

    def second():
        stopping.wait(5)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=second, daemon=True).start()
    t0 = time.monotonic()
    with pytest.raises(cli_signals.Interrupted) as e:
        with cli_signals.ending_on_signals(stop):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert e.value.exit_code == 143
    assert [code for code, _ in left] == [130]
    assert time.monotonic() - t0 < 3  # not STOP_WAIT's 15 s


def test_exits_on_signals_says_the_line_and_exits_with_the_code(in_process, capsys):
    from reprokit.cli_signals import exits_on_signals

    with pytest.raises(SystemExit) as e:
        with exits_on_signals(lambda: None, "minify", {"run_dir": "/runs/a", "as_json": True}, "repro"):
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)
    said = "interrupted (SIGHUP): what was found is in /runs/a; resume with: reprokit minify /runs/a --resume"
    out, err = capsys.readouterr()
    assert e.value.code == 129
    assert err == f"reprokit: {said}\n"
    assert json.loads(out) == {"repro": None, "message": said, "exit_code": 129, "run_dir": None}


SECOND = """import sys, threading, time
from reprokit import cli_signals

cli_signals.STOP_WAIT, cli_signals.GRACE = float(sys.argv[2]), float(sys.argv[3])
threading.Thread(target=time.sleep, args=(60,)).start()  # a thread the interpreter waits for at exit


def stop():
    open(sys.argv[1], "w").close()
    time.sleep(60)


with cli_signals.exits_on_signals(stop, "bisect", {}, "failing_stage"):
    print("ready", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize(
    "second, code, line", [(signal.SIGINT, 130, False), (None, 143, True)], ids=["second-SIGINT", "GRACE"]
)
def test_the_process_ends_on_a_second_signal_or_by_grace(tmp_path, second, code, line):
    """The real exit: at once on a second signal; else the line after STOP_WAIT, and the end by GRACE though a
    thread the interpreter waits for still runs."""
    marker = tmp_path / "stopping"
    proc = subprocess.Popen(
        [sys.executable, "-c", SECOND, str(marker), "1", "3"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline() == "ready\n"
        os.kill(proc.pid, signal.SIGTERM)
        while not marker.exists():
            time.sleep(0.05)
        sent = time.monotonic()
        if second:
            os.kill(proc.pid, second)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert (err == "reprokit: interrupted (SIGTERM)\n") is line, err
    assert took < 1 if second else 2 < took < 4, took
