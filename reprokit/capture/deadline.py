"""`reprokit capture --compile-timeout D [--fall-back-to-eager]`: one graph's compile past D seconds is written
out as a hang (its stacks as the limit found them), then the job stops with one line, or, falling back, that graph
runs eagerly and the job goes on (capture.json names the graphs that fell back)."""

from __future__ import annotations

import os
import signal
import sys
import threading

from reprokit.capture import files
from reprokit.capture.hang import record_hang

STOPPED = 124  # the job's exit status when a compile ran past the limit, as `timeout` exits


class CompileTimedOut(BaseException):
    """Raised in the compile by the alarm: a BaseException, so that torch's own `except Exception` lets it by."""


def within(rec, compile):
    """compile(), cut short by CompileTimedOut once it runs past rec.compile_timeout (main thread only: the
    alarm is a signal)."""
    if not rec.compile_timeout or threading.current_thread() is not threading.main_thread():
        return compile()

    def alarm(_sig, _frame):
        # Written here, where the compile is: its stacks, unwound, would show only reprokit's frame.
        record_hang(rec, f"--compile-timeout {rec.compile_timeout:g}")
        raise CompileTimedOut()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, rec.compile_timeout)
    try:
        return compile()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed_out(rec, k: int, gm):
    """Graph k's compile ran past the limit (written as a hang by the alarm): its eager forward when falling
    back, else the job stops here."""
    where = files.rank_dir(rec.root, rec.rank)
    said = f"reprokit capture: graph {k} compiled for more than {rec.compile_timeout:g} s: written as a hang in {where}"
    rec.mark("")
    if rec.fall_back:
        rec.fell_back.append(k)
        print(f"{said}; it runs eagerly (--fall-back-to-eager)", file=sys.stderr, flush=True)
        return gm.forward
    print(f"{said}; the job stops (next: reprokit bisect --from-capture {rec.root})", file=sys.stderr, flush=True)
    rec.write_summary()
    sys.stdout.flush()
    os._exit(STOPPED)  # no unwinding through the compiler, whose own handlers would wrap and report it
