"""`reprokit capture --output-dir DIR -- CMD ...`: the user's command run exactly as given, every python process
of it recording into DIR through the start-up hook (REPROKIT_CAPTURE); its output and exit status are its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from reprokit import settings
from reprokit.app import guards
from reprokit.bisect.capture_folder import crashed_ranks, exited_ranks, failing_ranks, killed_ranks
from reprokit.capture.arm import DEFAULT_MAX_INPUT_BYTES
from reprokit.capture.check import DEFAULT_CALLS
from reprokit.capture.checked import Checked, checked
from reprokit.capture.files import (
    CAPTURE_VAR,
    CHECK_CALLS_VAR,
    COMPILE_TIMEOUT_VAR,
    FALL_BACK_VAR,
    MAX_BYTES_VAR,
    MAX_GRAPH_BYTES_VAR,
    ON_DISK_VAR,
    SUMMARY,
)
from reprokit.capture.summary import note_job
from reprokit.child.ranks import HOOK_DIR
from reprokit.data.budget import parse_budget
from reprokit.data.events import Event
from reprokit.errors import ReprokitError


@dataclass(frozen=True)
class CaptureRun:
    """How the captured command ended, and what the capture holds."""

    exit_status: int
    seconds: float
    output_dir: str
    failures: tuple  # rank folders holding a failure.json, else those of ranks that died by a signal in a graph
    fault_reports: tuple = ()  # faulthandler's report of each crashed rank (the capture took faulthandler over)
    kept_calls: tuple = ()  # rank folders whose process ended in error with no failure: each graph's latest call
    check: Checked | None = None  # --check-accuracy: what the checks found
    # (rank, what it was doing) of each rank an ending signal found compiling, running or waiting (capture/hang.py)
    ended_in: tuple = ()


def capture_command(
    output_dir: str,
    command: tuple,
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES,
    compile_timeout: str | None = None,
    fall_back: bool = False,
    check_accuracy: bool = False,
    check_calls: int | None = None,
    emit: Callable[..., None] | None = None,
    max_graph_input_bytes: int | None = None,
    inputs_on_disk: bool = False,
) -> CaptureRun:
    """Run `command` with the recorder armed in every python process it starts; nothing of the environment is
    written (the recorder writes graphs, inputs and the failure only). compile_timeout: a duration as typed;
    check_calls: with check_accuracy, the first calls of each graph compared with eager (said through emit
    before the job starts: "check", calls=N); max_input_bytes a tensor, max_graph_input_bytes a graph (None: 4x
    that), inputs_on_disk: those over them streamed to disk."""
    if not command:
        raise ReprokitError(
            "pass the command to capture after --: reprokit capture --output-dir DIR -- python train.py"
        )
    check_calls = _check_calls(check_accuracy, check_calls)
    limit = _compile_limit(max_input_bytes, max_graph_input_bytes, compile_timeout, fall_back)
    root = os.path.abspath(output_dir)
    try:
        os.makedirs(root, 0o700, exist_ok=True)
    except OSError as e:
        raise ReprokitError(f"cannot write to {root}: {e.strerror}; pass --output-dir to a writable folder") from None
    recorder = {
        CAPTURE_VAR: root,
        MAX_BYTES_VAR: str(max_input_bytes),
        **({MAX_GRAPH_BYTES_VAR: str(max_graph_input_bytes)} if max_graph_input_bytes is not None else {}),
        **({ON_DISK_VAR: "1"} if inputs_on_disk else {}),
        **({COMPILE_TIMEOUT_VAR: f"{limit:g}", FALL_BACK_VAR: "1" if fall_back else "0"} if limit else {}),
        **({CHECK_CALLS_VAR: str(check_calls)} if check_calls else {}),
    }
    env = _job_environment(recorder)
    if check_calls and emit is not None:
        emit(Event.CHECK, calls=check_calls)
    note_job(root, {"command": list(command), "ended": None})  # None until it ends: a kill -9 leaves it so
    started = time.monotonic()
    status = _run(command, env)
    seconds = round(time.monotonic() - started, 2)
    failures = tuple(f"rank{r}" for r in failing_ranks(root))
    crashes = crashed_ranks(root)
    failures = failures or tuple(f"rank{r}" for r in crashes)  # died by a signal
    failures = failures or tuple(f"rank{r}" for r in killed_ranks(root))  # kill -9 in a graph: a hang
    ended = {"exit_status": status} if status >= 0 else {"signal": signal.Signals(-status).name}
    note_job(root, {"ended": ended, "seconds": seconds})
    return CaptureRun(
        status if status >= 0 else 128 - status,
        seconds,
        root,
        failures,
        tuple(c["traceback"] for c in crashes.values()),
        () if failures else tuple(f"rank{r}" for r in exited_ranks(root)),
        checked(root) if check_calls else None,
        _ended_in(root),
    )


def _compile_limit(max_input_bytes: int, max_graph_input_bytes, compile_timeout, fall_back: bool) -> float | None:
    """--compile-timeout in seconds (None: none), once the caps and --fall-back-to-eager are checked (exit 2)."""
    guards.not_negative("--max-input-bytes", max_input_bytes, "a size in bytes")
    if max_graph_input_bytes is not None:
        guards.not_negative("--max-graph-input-bytes", max_graph_input_bytes, "a size in bytes")
    limit = parse_budget(compile_timeout, "--compile-timeout")
    if fall_back and limit is None:
        raise ReprokitError("--fall-back-to-eager needs --compile-timeout DURATION: the compile it falls back from")
    return limit


def _job_environment(recorder: dict) -> dict:
    """The job's environment: the user's, the recorder's switches, and the start-up hook first on PYTHONPATH (which
    arms the recorder in every python process the command starts)."""
    paths = [p for p in settings.PYTHONPATH.get("").split(os.pathsep) if p and p != HOOK_DIR]
    return {**os.environ, **recorder, "PYTHONPATH": os.pathsep.join([HOOK_DIR, *paths])}


def _ended_in(root: str) -> tuple:
    """(rank, what it was doing) as capture.json's rank lines say, for a job an ending signal stopped."""
    try:
        with open(os.path.join(root, SUMMARY)) as f:
            ranks = json.load(f).get("ranks") or {}
    except (OSError, ValueError):
        return ()
    return tuple(
        (r, line["ended_in"]) for r, line in sorted(ranks.items(), key=lambda x: int(x[0])) if line.get("ended_in")
    )


def _check_calls(check_accuracy: bool, calls: int | None) -> int:
    """How many calls of each graph are checked (0: none)."""
    if not check_accuracy:
        if calls is not None:
            raise ReprokitError("--check-calls needs --check-accuracy: it says how many calls of each graph to check")
        return 0
    calls = DEFAULT_CALLS if calls is None else calls
    guards.at_least_one("--check-calls", calls, "a number of calls")
    return calls


def _run(command: tuple, env: dict) -> int:
    """The job's exit status (negative: the signal that ended it). A SIGTERM or SIGHUP sent to reprokit alone is
    passed on to the job, whose recorder writes the graph in flight as a hang; Ctrl-C reaches the job from the
    terminal itself (its whole process group), so reprokit waits for the job instead of killing it."""
    try:
        proc = subprocess.Popen(list(command), env=env)
    except FileNotFoundError:
        raise ReprokitError(f"no such command: {command[0]}") from None
    forward = {signal.SIGTERM, signal.SIGHUP}
    previous = {s: signal.getsignal(s) for s in (*forward, signal.SIGINT)}
    for s in forward:
        signal.signal(s, lambda sig, _frame: proc.send_signal(sig))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
