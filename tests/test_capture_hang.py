"""A compile that hangs, captured in one run as a user ends it (issue 47): `timeout` or a scheduler (SIGTERM),
Ctrl-C (SIGINT), kill -9; then `bisect --from-capture` judges the hang by a limit the capture sets. The real
compiler on CPU: tests/capture_cases/hang_job.py trains 1 s, then inductor's own sleep_sec_TESTING_ONLY hangs the
next graph's compile."""

import glob
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
import types

import pytest
import torch

from reprokit.bisect.capture_folder import read_capture
from reprokit.bisect.hang_limit import hang_limit
from tests.opt_in import opt_in
from tests.test_capture import cli

CASES = pathlib.Path(__file__).parent / "capture_cases"


def capture_until(workdir, capture, job: str | list, ready, sig: int, after: float = 2.0) -> int:
    """`reprokit capture` of `job` (a script, or a whole command) in a session of its own, sent `sig` to its whole
    process group (as `timeout`, a scheduler or the terminal's Ctrl-C sends it) `after` seconds once
    ready(capture) holds; its exit status."""
    command = job if isinstance(job, list) else [sys.executable, job]
    proc = subprocess.Popen(
        [sys.executable, "-m", "reprokit.cli", "capture", "--output-dir", str(capture), "--", *command],
        cwd=workdir,
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal's foreground job has it: pytest started by `cmd &` in a script (or nohup) ignores
        # it, the job would inherit that, and the capture rightly leaves an ignored signal ignored (capture/hang)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 300
        while not ready(capture, proc) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert proc.poll() is None, "the job ended before it was ready"
        time.sleep(after)
        os.killpg(proc.pid, sig)
        return proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def compiling(k: int):
    """Ready once the marker written ahead says graph k is compiling."""

    def ready(capture, _proc) -> bool:
        for marker in glob.glob(str(capture / "rank0" / "ahead-*" / "inflight")):
            with open(marker, "rb") as f:
                if f.read().rstrip(b"\0") == f"compile {k}".encode():
                    return True
        return False

    return ready


def hang_failure(capture) -> dict:
    """failure.json of a hang, checked as a user reads it: the graph, its phase, how long, the stacks file."""
    failure = json.loads((capture / "rank0" / "failure.json").read_text())
    assert (failure["kind"], failure["phase"], failure["graph"]) == ("hang", "compile", 1)
    assert failure["seconds"] >= 2.0 and failure["longest_compile"] > 0
    stacks = (capture / "rank0" / failure["stacks"]).read_text()
    assert "compile_fx" in stacks and "Current thread" in stacks  # faulthandler's, every thread, in inductor
    assert (capture / "rank0" / "case" / "meta.json").is_file()
    return failure


def bisected_to_a_repro(capture, tmp_path) -> tuple[str, pathlib.Path]:
    """`bisect --from-capture` of a captured compile hang, as a user reads it: the stage (inductor; the sleep hook
    is no pass or lowering torch's counters could name), and a repro.py verified by running it alone, which said
    "still compiling after N s" with the compiling thread's stack and exited 1. (the progress lines, the run folder)."""
    code, out, err = cli(
        "bisect", "--from-capture", str(capture), "-o", str(tmp_path / "runs"), "--no-pack", "--no-subsystems",
        "--no-configs",
    )  # fmt: skip
    assert code == 0, out + err
    limit, why = hang_limit(json.loads((capture / "rank0" / "failure.json").read_text()))
    assert f"a hang: each trial may take {limit:.0f} s ({why}; --timeout sets another)" in err  # the capture's
    assert "failing stage              inductor" in out
    assert "✗ inductor" in err and "hang: timed out" in err and "(same as the original)" in err
    assert "✓ aot_eager " in err
    assert "repro.py verified: failed the same way in 1 of 1 fresh runs" in err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    said = (run_dir / "repro_run" / "stderr.txt").read_text()  # `python repro.py` in its folder, as verified
    assert re.search(r"^still compiling after \d+ s: the hang reproduced; every thread's stack:$", said, re.M), said
    assert "compile_fx.py" in said.split("the hang reproduced")[1]  # the main thread's stack, in inductor's compile
    assert json.loads((run_dir / "repro_run" / "result.json").read_text())["returncode"] == 1
    return err, run_dir


@pytest.mark.slow
def test_a_compile_hang_ended_by_sigterm_is_captured_and_bisected_to_a_repro_by_time(workdir, tmp_path):
    """CI's one captured hang taken to a verified repro.py (Ctrl-C's and --compile-timeout's, opt-in, write the
    same failure.json): the sleep hook costs wall time, not CPU."""
    capture = tmp_path / "cap"
    status = capture_until(workdir, capture, "hang_job.py", compiling(1), signal.SIGTERM)
    assert status == 128 + signal.SIGTERM  # the job's own ending, passed on
    summary = json.loads((capture / "capture.json").read_text())
    assert summary["job"]["ended"] == {"signal": "SIGTERM"}
    assert summary["ranks"]["0"]["failed"] is True
    failure = hang_failure(capture)
    assert failure["ended_by"] == "SIGTERM"
    assert not glob.glob(str(capture / "rank0" / "ahead-*"))  # the hang is written: nothing left to read ahead

    started = time.monotonic()
    progress, run_dir = bisected_to_a_repro(capture, tmp_path)
    elapsed = time.monotonic() - started
    assert "a hang: each trial may take 20 s (3x the job's longest compile" in progress
    trials = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    hung = [e["outcome"]["seconds"] for e in trials if (e.get("outcome") or {}).get("kind") == "hang"]
    assert hung and max(hung) < 60, hung  # each at the capture's limit: the default is 600 s a trial
    assert elapsed < 500, elapsed


@pytest.mark.slow
def test_ctrl_c_in_a_compile_is_a_hang_not_a_keyboard_interrupt(workdir, tmp_path):
    capture = tmp_path / "cap"
    status = capture_until(workdir, capture, "hang_job.py", compiling(1), signal.SIGINT)
    assert status == 128 + signal.SIGINT  # Python's own ending by an uncaught KeyboardInterrupt
    assert json.loads((capture / "capture.json").read_text())["job"]["ended"] == {"signal": "SIGINT"}
    failure = hang_failure(capture)
    assert failure["ended_by"] == "SIGINT"
    assert failure["signature"]["kind"] == "hang"


@pytest.mark.slow
def test_a_kill_9_in_a_compile_is_read_from_what_was_written_ahead(workdir, tmp_path):
    capture = tmp_path / "cap"
    capture_until(workdir, capture, "hang_job.py", compiling(1), signal.SIGKILL)
    assert json.loads((capture / "capture.json").read_text())["job"]["ended"] is None  # reprokit was killed too
    captured = read_capture(str(capture), torch.__version__)
    assert (captured.failure["kind"], captured.failure["phase"], captured.failure["graph"]) == ("hang", "compile", 1)
    assert captured.failure["seconds"] is None  # nobody saw it end


@pytest.mark.parametrize(
    "sig, how",
    [(signal.SIGTERM, "SIGTERM"), (signal.SIGKILL, "a kill that left no record (kill -9?)")],
    ids=["sigterm", "kill-9"],
)
def test_a_job_ended_before_any_graph_compiled_has_nothing_to_blame(workdir, tmp_path, sig, how):
    capture = tmp_path / "cap"

    def loaded(_capture, proc) -> bool:
        return proc.stdout.readline().startswith("loaded torch")

    status = capture_until(workdir, capture, "slow_start_job.py", loaded, sig, after=0.5)
    assert status == (128 + sig if sig != signal.SIGKILL else -sig)  # kill -9 takes reprokit's own process too
    code, out, err = cli("bisect", "--from-capture", str(capture))
    assert (code, out) == (3, "")
    assert err == (
        f"reprokit: the captured job was ended by {how} before any graph compiled: there is nothing compiled "
        "to blame; capture it again and end it once it compiles (its hang, or its failure, comes after)\n"
    )


def capture_with_limit(workdir, capture, *options) -> subprocess.CompletedProcess:
    """`reprokit capture --compile-timeout ... -- python hang_job.py`, run to its end."""
    return subprocess.run(
        [sys.executable, "-m", "reprokit.cli", "capture", "--output-dir", str(capture), *options, "--",
         sys.executable, "hang_job.py"],
        cwd=workdir, capture_output=True, text=True, timeout=400,
    )  # fmt: skip


@pytest.mark.slow
@opt_in(
    "about 70 s): the --fall-back-to-eager test covers the class (the same alarm writes the same "
    "hang; only what follows differs)"
)
def test_a_compile_past_compile_timeout_is_a_hang_and_stops_the_job(workdir, tmp_path):
    capture = tmp_path / "cap"
    done = capture_with_limit(workdir, capture, "--compile-timeout", "40s")
    assert done.returncode == 124, done.stderr
    assert done.stdout.startswith("trained: loss ") and "tensor" not in done.stdout
    assert (
        f"reprokit capture: graph 1 compiled for more than 40 s: written as a hang in {capture}/rank0; the job "
        f"stops (next: reprokit bisect --from-capture {capture})\n"
    ) in done.stderr
    failure = hang_failure(capture)
    assert failure["ended_by"] == "--compile-timeout 40" and failure["seconds"] >= 40
    assert json.loads((capture / "capture.json").read_text())["ranks"]["0"]["failed"] is True


@pytest.mark.slow
def test_fall_back_to_eager_runs_that_graph_eagerly_and_the_job_goes_on(workdir, tmp_path):
    capture = tmp_path / "cap"
    done = capture_with_limit(workdir, capture, "--compile-timeout", "40s", "--fall-back-to-eager")
    assert done.returncode == 0, done.stderr
    assert "tensor([[" in done.stdout and done.stdout.endswith("matches eager: True\n")  # computed eagerly
    assert "graph 1 compiled for more than 40 s: written as a hang in" in done.stderr
    assert "; it runs eagerly (--fall-back-to-eager)\n" in done.stderr
    assert json.loads((capture / "capture.json").read_text())["ranks"]["0"]["fell_back"] == [1]
    assert hang_failure(capture)["ended_by"] == "--compile-timeout 40"


def test_fall_back_to_eager_needs_a_compile_timeout(tmp_path):
    code, out, err = cli("capture", "--output-dir", str(tmp_path), "--fall-back-to-eager", "--", "true")
    assert (code, out) == (2, "")
    assert err == "reprokit: --fall-back-to-eager needs --compile-timeout DURATION: the compile it falls back from\n"


def test_compile_timeout_takes_a_duration(tmp_path):
    code, out, err = cli("capture", "--output-dir", str(tmp_path), "--compile-timeout", "soon", "--", "true")
    assert (code, out) == (2, "")
    assert err == "reprokit: --compile-timeout takes a duration like 90s, 20m or 1h30m (got 'soon')\n"


def test_a_hangs_limit_is_a_few_compiles_under_half_the_hang_and_never_below_the_floor():
    assert hang_limit({"longest_compile": 11.6, "seconds": 58.6}) == (
        29.3,
        "3x the job's longest compile (11.6 s), at most half the hang's 59 s",
    )
    assert hang_limit({"longest_compile": 2.0, "seconds": 600}) == (
        20.0,
        "3x the job's longest compile (2.0 s), at least 20 s",
    )
    assert hang_limit({"seconds": None}) == (120.0, "no compile ended")  # kill -9: nothing measured


def test_a_hang_in_place_sets_each_later_compiles_limit_as_a_capture_would():
    from reprokit.bisect.hang_limit import in_place_limit
    from reprokit.data.records import Outcome
    from reprokit.data.signature import HANG

    def original(**kw):
        return Outcome(kind="hang", signature=HANG, seconds=121.2, compiled=True, **kw)

    assert in_place_limit(original(graphs=2, longest_compile=9.0)) == {
        "seconds": 27.0,
        "why": "3x the job's longest compile (9.0 s)",
    }
    assert in_place_limit(original(graphs=1)) == {
        "seconds": 60.6,
        "why": "no compile ended, at most half the hang's 121 s",
    }
    assert in_place_limit(original(graphs=0)) is None  # Dynamo's own hang: no compile to limit


def test_what_each_rank_was_doing_when_the_job_ended(tmp_path):
    from reprokit.capture.ending import ended_in

    (tmp_path / "ending.txt").write_text(
        "Thread 0x7f (most recent call first):\n"
        '  File "/x/site-packages/torch/distributed/c10d_logger.py", line 81 in wrapper\n'
        '  File "/x/site-packages/torch/distributed/distributed_c10d.py", line 2952 in all_reduce\n'
        '  File "/x/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper\n'
        '  File "/job/train.py", line 27 in <module>\n'
    )
    rank = types.SimpleNamespace(inflight=None, ahead=types.SimpleNamespace(folder=str(tmp_path)))
    assert ended_in(rank) == "waiting in a collective (all_reduce)"
    assert ended_in(types.SimpleNamespace(inflight=("compile", 1, 0.0), ahead=None)) == "compiling graph 1"
    assert ended_in(types.SimpleNamespace(inflight=None, ahead=None)) == "outside any compiled graph"
    from reprokit.bisect.from_capture import waiting_ranks

    summary = {"ranks": {"0": {"ended_in": "compiling graph 1"}, "1": {"ended_in": ended_in(rank)}}}
    assert waiting_ranks(summary, "0") == "; rank 1 was waiting in a collective (all_reduce)"  # the verdict's line
