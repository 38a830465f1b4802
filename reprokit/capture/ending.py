"""What each process was doing when a signal ended the job: every thread's stack as the signal arrived (a
process blocked in C, as a collective waiting on a rank that hangs, runs no Python until it returns), read as the
graph in flight, the collective it waited in, or neither."""

from __future__ import annotations

import faulthandler
import os
import re
import signal

from reprokit.capture import files

ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

DOING = {"compile": "compiling graph {k}", "run": "running graph {k}", "backward": "running graph {k}'s backward"}
# A collective in faulthandler's dump: the innermost frame of distributed_c10d.py's public functions.
COLLECTIVE = re.compile(r'torch/distributed/distributed_c10d\.py", line \d+ in ([a-z][a-z_]*)$', re.M)


def stacks_at_signal(folder: str):
    """Every thread's stack written to folder/ending.txt the moment an ending signal arrives, before Python's
    handler runs: a process blocked in C (a collective waiting on a rank that hangs) runs no Python until it
    returns. The open file, or None where faulthandler cannot register (a thread other than the main one)."""
    f = open(os.path.join(folder, files.ENDING), "w")
    try:
        for signum in ENDING:
            if signal.getsignal(signum) not in (signal.SIG_IGN, None):
                faulthandler.register(signum, file=f, all_threads=True, chain=True)
    except (RuntimeError, ValueError):
        f.close()
        return None
    return f


def stop_stacks(f) -> None:
    """The process exits or forked: no more stacks into its folder."""
    if f is None:
        return
    for signum in ENDING:
        faulthandler.unregister(signum)
    f.close()


def ended_in(rec) -> str:
    """What the process was doing when the signal came: the graph in flight, else the collective its stacks
    show it waiting in, else outside any compiled graph."""
    if rec.inflight is not None:
        phase, k, _ = rec.inflight
        return DOING.get(phase, phase + " graph {k}").format(k=k)
    text = ""
    if rec.ahead is not None and rec.ahead.folder:
        try:
            with open(os.path.join(rec.ahead.folder, files.ENDING), errors="replace") as f:
                text = f.read()
        except OSError:
            pass
    waits = COLLECTIVE.findall(text)
    return f"waiting in a collective ({waits[0]})" if waits else "outside any compiled graph"
