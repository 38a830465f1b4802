"""What a process that dies by a signal (a segfault in a compiled kernel, an abort in C++) leaves for the offline
bisect: no Python runs after a fatal signal, so the recorder writes ahead of it. Each graph is written out before
it compiles (light: no eager run of it, inputs only under a small cap); a marker mapped into memory says which
graph is compiling or running, at the cost of a store per call; Python's faulthandler names the signal. A process
that exits, whether it passed or raised, removes all of it (Recorder.write_summary)."""
from __future__ import annotations

import faulthandler
import json
import mmap
import os
import re
import shutil
import signal as _signal
from typing import Optional

from reprokit.capture import files
from reprokit.data.signature import for_signal

MARK_BYTES = 64
AHEAD = "ahead"  # in a trial folder (the in-place bisect's original run): the graphs and marker, as in a capture
PREWRITE_MAX_INPUT_BYTES = 1 << 20  # real values of a graph written ahead: small ones only (indices, masks)
# faulthandler's first line per fatal signal
FATAL = {"Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Floating point exception": "SIGFPE",
         "Bus error": "SIGBUS", "Illegal instruction": "SIGILL"}


class Marker:
    """A few bytes in a file mapped into memory: "compile K", "run K", "backward K" (its backward may follow), or
    empty. The kernel keeps the page when the process dies, so it is read back after a crash."""

    def __init__(self, path: str):
        with open(path, "wb") as f:
            f.write(b"\0" * MARK_BYTES)
        with open(path, "r+b") as f:
            self._map = mmap.mmap(f.fileno(), MARK_BYTES)

    def set(self, text: str) -> None:
        data = text.encode()[:MARK_BYTES]
        self._map[:] = data + b"\0" * (MARK_BYTES - len(data))

    def close(self) -> None:
        self._map.close()


def start(rank_dir: str, facts: dict) -> tuple[Marker, Optional[object]]:
    """In a process's first compile: its facts (process.json), the marker, and faulthandler writing into the rank's
    folder, unless the job enabled faulthandler itself (then the signal goes unnamed)."""
    os.makedirs(os.path.join(rank_dir, files.GRAPHS), exist_ok=True)
    with open(os.path.join(rank_dir, files.PROCESS), "w") as f:
        json.dump(facts, f)
    fault = None
    if not faulthandler.is_enabled():
        fault = open(os.path.join(rank_dir, files.FAULT), "w")
        faulthandler.enable(file=fault, all_threads=True)
    return Marker(os.path.join(rank_dir, files.INFLIGHT)), fault


def finish(rank_dir: str, marker: Marker, fault) -> None:
    """The process exits normally: nothing of the crash evidence stays."""
    if fault is not None:
        faulthandler.disable()
        fault.close()
    marker.close()
    shutil.rmtree(os.path.join(rank_dir, files.GRAPHS), ignore_errors=True)
    for name in (files.INFLIGHT, files.FAULT, files.PROCESS):
        try:
            os.remove(os.path.join(rank_dir, name))
        except OSError:
            pass
    try:
        os.rmdir(rank_dir)  # empty unless a failure was written there
    except OSError:
        pass


def graph_dir(rank_dir: str, k: int) -> str:
    return os.path.join(rank_dir, files.GRAPHS, f"g{k}")


def marked(path: str) -> tuple[str, Optional[int]]:
    """(phase, graph) the marker file at `path` names; ("", None) when it names none or cannot be read."""
    try:
        with open(path, "rb") as f:
            mark = f.read(MARK_BYTES).rstrip(b"\0").decode(errors="replace")
    except OSError:
        return "", None
    phase, _, k = mark.partition(" ")
    return phase, int(k) if k.isdigit() else None


def crashed(rank_dir: str) -> Optional[dict]:
    """The failure record of a process that died by a fatal signal in a compiled graph (as failure.json would
    hold it), or None: it needs the signal faulthandler named and the marker naming a graph written ahead."""
    try:
        with open(os.path.join(rank_dir, files.FAULT), errors="replace") as f:
            fault = f.read()
        with open(os.path.join(rank_dir, files.PROCESS)) as f:
            facts = json.load(f)
    except (OSError, ValueError):
        return None
    m = re.search(r"Fatal Python error: ([A-Za-z ]+)", fault)
    phase, k = marked(os.path.join(rank_dir, files.INFLIGHT))
    signal = FATAL.get(m.group(1).strip()) if m else None
    if signal is None or k is None or not os.path.isdir(graph_dir(rank_dir, k)):
        return None
    return {**facts, "kind": "crash", "phase": phase, "graph": k, "case": graph_dir(rank_dir, k),
            "signature": for_signal(getattr(_signal, signal)).to_dict(),
            "traceback": fault[-20000:]}
