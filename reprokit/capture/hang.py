"""A job ended by SIGINT, SIGTERM or SIGHUP (Ctrl-C, `timeout`, a scheduler's time limit) while a graph compiles
or runs: that graph is written as a hang, with how long it had been at it and every thread's stack, and
capture.json is written before the signal takes its course (the job still ends as it would have)."""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import sys
import threading
import time

from reprokit.capture import files
from reprokit.capture.ending import ENDING, ended_in
from reprokit.data.rundir import write_json_atomic
from reprokit.data.signature import HANG


def install(rec) -> None:
    """Our handler before the job's: a signal the job ignores (nohup) stays ignored, and one the job handles
    later is the job's (its handler replaces ours)."""
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal works in the main thread only; torch imported elsewhere records no hangs
    for signum in ENDING:
        previous = signal.getsignal(signum)
        if previous in (signal.SIG_IGN, None):
            continue
        signal.signal(signum, _ending(rec, signum, previous))


def _ending(rec, signum: int, previous):
    def ended(sig, frame):
        if rec.ending:
            return  # the same signal again (sent to the job's group and passed on by reprokit): one is enough
        rec.ending = True
        rec.ended_in = ended_in(rec)
        record_hang(rec, signal.Signals(sig).name)
        rec.write_summary()
        signal.signal(signum, previous)
        if callable(previous):
            rec.ending = False  # the job may go on (it catches KeyboardInterrupt): a later signal is handled
            previous(sig, frame)  # SIGINT's default raises KeyboardInterrupt where the job is
        else:
            os.kill(os.getpid(), sig)  # SIG_DFL: the process ends by the signal, its exit status unchanged

    return ended


def record_hang(rec, how: str) -> None:
    """Write the graph in flight as a hang (once per process, none when no graph is in flight); never raises."""
    inflight = rec.inflight
    if rec.failed or inflight is None:
        return
    rec.failed = True
    try:
        _write_hang(rec, how, *inflight)
    except Exception as e:  # the capture is lost, the job's ending is not
        print(f"reprokit capture: could not write the hung graph: {type(e).__name__}: {e}", file=sys.stderr)


def _write_hang(rec, how: str, phase: str, k: int, started: float) -> None:
    from reprokit import compat
    from reprokit.capture.crash import graph_case
    from reprokit.capture.facts import process_group, script_path

    seconds = round(time.monotonic() - started, 3)
    out = files.rank_dir(rec.root, rec.rank)
    os.makedirs(out, exist_ok=True)
    stacks = os.path.join(out, files.STACKS)
    with open(stacks, "w") as f:
        faulthandler.dump_traceback(file=f, all_threads=True)
    ahead = graph_case(rec.ahead.folder, k) if rec.ahead is not None and rec.ahead.folder else None
    if ahead is None:
        raise RuntimeError(f"graph {k} was not written ahead")
    shutil.copytree(ahead, os.path.join(out, files.CASE), dirs_exist_ok=True)
    with open(stacks, errors="replace") as f:
        text = f.read()
    record = {
        "kind": "hang",
        "signature": HANG.to_dict(),
        "phase": phase,
        "graph": k,
        "graphs_seen": len(rec.graphs),
        "seconds": seconds,
        "ended_by": how,
        "stacks": files.STACKS,
        "longest_compile": rec.longest_compile,
        "rank": rec.rank,
        "process_group": process_group(),
        "torch_version": compat.TORCH_VERSION,
        "script": script_path(),
        "note": f"ended by {how} after {seconds:.1f} s in the {phase} of graph {k}",
        "traceback": text[-20000:],
    }
    write_json_atomic(os.path.join(out, files.FAILURE), record)
