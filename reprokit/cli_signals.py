"""SIGINT, SIGTERM and SIGHUP end a run cleanly: its trials killed and its cluster jobs cancelled at once, one line
naming the run folder and the command that goes on from it, exit 128 + the signal's number (130, 143, 129).

Why: Python's default SIGTERM and SIGHUP end reprokit without running a line of it (exit 143 or 129, the reaper
kills the local trials, but the cluster's jobs ran on to COMPLETED), and Ctrl-C's KeyboardInterrupt reached
click, which says only "Aborted!" and exits 1. What was found is already on disk: every answer is in
journal.jsonl as it comes, verdict.json is written once the isolation is found, and minify saves each smaller
failing graph to minify.json as it finds it (`minify --resume` starts from it; repro.py is not written, since no
trial runs once the signal came).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator

import click

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How long the command waits for stop() (squeue, then scancel: each an RPC to slurmctld) before it exits anyway.
STOP_WAIT = 15.0
# Once the first signal came the process is gone within this many seconds, whatever still runs (a thread the
# interpreter waits for at exit, a scancel that hangs): armed before stop() starts.
GRACE = 20.0


class Interrupted(BaseException):
    """A signal ends the run: raised in the main thread. A BaseException, so no `except Exception` on the way up
    swallows it; not a KeyboardInterrupt, so no handler of Ctrl-C on the way up takes it for one."""

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
def exits_on_signals(stop: Callable[[], None], command: str, kwargs: dict, empty_key: str) -> Iterator[None]:
    """The command's signals (ending_on_signals) end it with its one line on stderr (and with --json, one JSON
    object on stdout whose empty_key is null), exit 128 + the signal's number."""

    def ended(e: Interrupted) -> None:
        said = interrupted_line(e, command, kwargs)
        if kwargs.get("as_json"):
            data = {empty_key: None, "message": said, "exit_code": e.exit_code, "run_dir": e.run_dir}
            click.echo(json.dumps(data, sort_keys=True))
        click.echo(f"reprokit: {said}", err=True)
        sys.exit(e.exit_code)

    with ending_on_signals(stop, ended):
        yield


@contextlib.contextmanager
def ending_on_signals(stop: Callable[[], None], ended: Callable[[Interrupted], None] | None = None) -> Iterator[None]:
    """Within the block, the first of SIGINT, SIGTERM or SIGHUP wakes a stopper thread (started beforehand: the
    handler only records the signal) that arms the GRACE exit and runs stop() (it takes locks the main thread may
    hold), and raises Interrupted in the main thread. The block's end waits up to STOP_WAIT for stop(), then
    ended(e) runs, our handlers still in place: a second signal meanwhile ends the process at once with its code
    (the reaper still kills the local trials). A signal this process was started ignoring (nohup, `cmd &`) stays
    ignored."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    got: dict = {}
    woken = threading.Event()
    stopper = threading.Thread(target=_stopper, args=(woken, got, stop), name="reprokit-stop", daemon=True)
    stopper.start()

    def handler(signum, _frame):
        if got:
            _leave(128 + signum)
            return
        got["signum"] = signum
        woken.set()  # no lock of this Event is ever held by the main thread, which this handler interrupts
        raise Interrupted(signum)

    before = {s: signal.getsignal(s) for s in SIGNALS}
    try:
        for s, old in before.items():
            if old is not signal.SIG_IGN:
                signal.signal(s, handler)
        yield
    except Interrupted as e:
        stopper.join(STOP_WAIT)
        if ended is not None:
            ended(e)
        raise
    finally:
        for s, old in before.items():
            signal.signal(s, old)
        woken.set()  # with no signal, the stopper ends without stopping anything


def _stopper(woken: threading.Event, got: dict, stop: Callable[[], None]) -> None:
    """Waits for the first signal; then the process ends within GRACE seconds, and stop() runs."""
    woken.wait()
    if not got:  # the block ended without a signal
        return
    leave = threading.Timer(GRACE, _leave, (128 + got["signum"],))
    leave.daemon = True  # not one of the threads the interpreter waits for as it exits
    leave.start()
    stop()


def _leave(code: int) -> None:
    """The process ends now, with code: no cleanup, no thread waited for."""
    os._exit(code)


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
