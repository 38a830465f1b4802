"""SIGINT, SIGTERM and SIGHUP end a run cleanly: its trials killed and its cluster jobs cancelled at once, one line
naming the run folder and the command that goes on from it, exit 128 + the signal's number (130, 143, 129).

Why: Python's default SIGTERM and SIGHUP end reprokit without running a line of it (exit 143 or 129, the reaper
kills the local trials, but the cluster's jobs ran on to COMPLETED), and Ctrl-C's KeyboardInterrupt reached
click, which says only "Aborted!" and exits 1. What was found is already on disk: every answer is in
journal.jsonl as it comes, and verdict.json is written after each phase.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import threading
from collections.abc import Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Once the first signal was handled the command must be gone within this many seconds, whatever still runs.
GRACE = 20.0


class Interrupted(BaseException):
    """A signal ends the run: raised in the main thread. A BaseException, so no `except Exception` on the way up
    swallows it; not a KeyboardInterrupt, so minify's Ctrl-C (verify the best so far, then go on) is not taken."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.run_dir: str | None = None  # set on the way up by cli_live.progress, once a run folder was named

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


@contextlib.contextmanager
def ending_on_signals(stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, the first of SIGINT, SIGTERM or SIGHUP starts stop() on a thread of its own (it takes
    locks the main thread may hold) and raises Interrupted in the main thread; a second one ends the process at
    once (the reaper still kills the local trials). A signal this process was started ignoring (nohup, `cmd &`)
    stays ignored."""
    state: dict = {}

    def handler(signum, _frame):
        if state:
            os._exit(128 + signum)
        state["stopper"] = threading.Thread(target=_stop_then_leave, args=(stop, 128 + signum), daemon=True)
        state["stopper"].start()
        raise Interrupted(signum)

    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    before = {s: signal.getsignal(s) for s in SIGNALS}
    for s, old in before.items():
        if old is not signal.SIG_IGN:
            signal.signal(s, handler)
    try:
        yield
    finally:
        for s, old in before.items():
            signal.signal(s, old)
        if state:
            state["stopper"].join(GRACE)


def _stop_then_leave(stop: Callable[[], None], code: int) -> None:
    """stop(), then the process ends within GRACE seconds even if a thread waits on something stop() missed."""
    stop()
    leave = threading.Timer(GRACE, os._exit, (code,))
    leave.daemon = True  # not one of the threads the interpreter waits for as it exits
    leave.start()


def interrupted_line(e: Interrupted, command: str, kwargs: dict) -> str:
    """The one line an interrupted command prints: the signal, where what was found is, how to go on."""
    run_dir = e.run_dir or (kwargs.get("run_dir") if command == "minify" else None)
    line = f"interrupted ({e.name})"
    if run_dir:
        line += f": what was found is in {run_dir}"
    go_on = _go_on(command, kwargs, run_dir)
    return f"{line}; {go_on}" if go_on else line


def _go_on(command: str, kwargs: dict, run_dir: str | None) -> str | None:
    """The command that continues from what the interrupted one left, where there is one."""
    if command == "bisect" and kwargs.get("capture_dir"):  # a capture's bisect starts a fresh folder
        return f"start it again with: reprokit bisect --from-capture {shlex.quote(kwargs['capture_dir'])}"
    if run_dir is None:
        return None
    if command == "bisect":
        return f"resume with: reprokit bisect --resume {shlex.quote(run_dir)}"
    if command == "minify":
        return f"resume with: reprokit minify {shlex.quote(run_dir)} --resume"
    return None
