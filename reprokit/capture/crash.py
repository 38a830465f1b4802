"""What a process that dies by a signal (a segfault in a compiled kernel, an abort in C++) leaves for the offline
bisect: no Python runs after a fatal signal, so it is written ahead. Each graph is written out before it compiles
(light: no eager run of it, real inputs and value statistics only for small inputs); a marker mapped into memory
says which graph is compiling, running or running backward, at a store per change; faulthandler names the signal.
Each process writes into a folder of its own (processes of one rank, forks, spawned workers never share one), and
removes it when it exits, whether it passed or raised."""

from __future__ import annotations

import faulthandler
import json
import mmap
import os
import re
import shutil
import signal as _signal

from reprokit.capture import ending, files
from reprokit.data.signature import HANG, for_signal

MARK_BYTES = 64
AHEAD = "ahead"  # in a rank's folder (or a trial's): ahead-<pid>/ per process
PREWRITE_MAX_INPUT_BYTES = 1 << 20  # real values of a graph written ahead: small ones only (indices, masks)
STATS_MAX_BYTES = 16 << 20  # value statistics ahead of a crash: an fp32 copy of a larger input could cost the job
# faulthandler's first line per fatal signal
FATAL = {
    "Segmentation fault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "Floating point exception": "SIGFPE",
    "Bus error": "SIGBUS",
    "Illegal instruction": "SIGILL",
}
FATAL_SIGNALS = frozenset(FATAL.values())


class Marker:
    """A few bytes in a file of this process's own, mapped into memory: "compile K", "run K", "backward K", or
    empty. The kernel keeps the page when the process dies, so it is read back after a crash."""

    def __init__(self, path: str):
        with open(path, "xb") as f:  # a new file: never one another process has mapped
            f.write(b"\0" * MARK_BYTES)
        with open(path, "r+b") as f:
            self._map = mmap.mmap(f.fileno(), MARK_BYTES)

    def set(self, text: str) -> None:
        try:
            self._map[:] = text.encode()[:MARK_BYTES].ljust(MARK_BYTES, b"\0")
        except ValueError:  # closed: the process is exiting; never the job's error
            pass


class Ahead:
    """One process's writing ahead of a crash, in parent/ahead-<pid>/."""

    def __init__(self, parent: str, facts: dict, own_faulthandler: bool):
        self.folder: str | None = os.path.join(parent, f"{AHEAD}-{os.getpid()}")  # None: forked, or finished
        shutil.rmtree(self.folder, ignore_errors=True)  # an earlier process's of the same pid, in a reused folder
        os.makedirs(os.path.join(self.folder, files.GRAPHS))
        try:
            with open(os.path.join(self.folder, files.PROCESS), "w") as f:
                json.dump(facts, f)
            self.marker: Marker | _NoMarker = Marker(os.path.join(self.folder, files.INFLIGHT))
            self.fault = None
            if own_faulthandler:
                # Taken over even when the job enabled it (torchrun's @record does): `reprokit capture` prints
                # the report after the job ends (capture_command).
                self.fault = open(os.path.join(self.folder, files.FAULT), "w")
                faulthandler.enable(file=self.fault, all_threads=True)
            self.ending = ending.stacks_at_signal(self.folder) if own_faulthandler else None
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """A forked child (a data-loader worker) neither reports into this folder nor removes it."""
        if self.fault is not None and faulthandler.is_enabled():
            faulthandler.disable()
        ending.stop_stacks(self.ending)
        self.marker, self.fault, self.folder, self.ending = _NoMarker(), None, None, None

    def follow(self, parent: str, facts: dict) -> None:
        """Move this process's folder under `parent` (its rank's, named once the process group was initialised),
        with the facts of the rank; the marker and faulthandler's file stay open across the rename."""
        if self.folder is None or os.path.dirname(self.folder) == parent:
            return
        old_parent, moved = os.path.dirname(self.folder), os.path.join(parent, os.path.basename(self.folder))
        os.makedirs(parent, exist_ok=True)
        os.rename(self.folder, moved)
        self.folder = moved
        with open(os.path.join(moved, files.PROCESS), "w") as f:
            json.dump(facts, f)
        try:
            os.rmdir(old_parent)  # the rank folder guessed before the group existed, when nothing else is there
        except OSError:
            pass

    def graph_dir(self, folder: str, k: int) -> str:
        return os.path.join(folder, files.GRAPHS, f"g{k}")

    def write(self, k: int, gm, example_inputs, max_input_bytes: int, **kw) -> None:
        """Graph k before it compiles; the marker says "compile k" once it is written (and nothing before: a
        graph that could not be written is not blamed for the crash of another)."""
        from reprokit.fx.capture import capture_graph
        from reprokit.fx.keep import Caps

        if self.folder is None:
            return
        self.marker.set("")
        capture_graph(
            gm,
            list(example_inputs),
            self.graph_dir(self.folder, k),
            max_input_bytes=min(max_input_bytes, PREWRITE_MAX_INPUT_BYTES),
            caps=Caps(
                min(max_input_bytes, PREWRITE_MAX_INPUT_BYTES), PREWRITE_MAX_INPUT_BYTES, PREWRITE_MAX_INPUT_BYTES
            ),
            run_eagerly=False,
            stats_max_bytes=STATS_MAX_BYTES,
            **kw,
        )
        self.marker.set(f"compile {k}")

    def finish(self) -> None:
        """The process exits normally: nothing of the crash evidence stays."""
        if self.folder is None:
            return
        if self.fault is not None:
            faulthandler.disable()
            self.fault.close()
        ending.stop_stacks(self.ending)
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            os.rmdir(os.path.dirname(self.folder))  # the rank's folder, when nothing else was written there
        except OSError:
            pass
        self.folder = None


def written_ahead(
    ahead: Ahead | None, make, k: int, gm, example_inputs, max_input_bytes: int, **kw
) -> tuple[Ahead | None, Exception | None]:
    """(the process's Ahead, made by make() on its first graph; None, or the error that kept graph k from being
    written ahead). Never raises: a process that cannot write ahead still answers the way it would have."""
    try:
        ahead = ahead if ahead is not None else make()
        ahead.write(k, gm, example_inputs, max_input_bytes, **kw)
        return ahead, None
    except Exception as e:
        return ahead, e


class _NoMarker:
    def set(self, text: str) -> None:
        pass


def ahead_folders(parent: str) -> list:
    """The ahead-<pid> folders under a rank's (or trial's) folder."""
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    return sorted(os.path.join(parent, n) for n in names if n.startswith(AHEAD + "-"))


def marked(folder: str) -> tuple[str, int | None]:
    """(phase, graph) the marker in an ahead folder names; ("", None) when it names none or cannot be read."""
    try:
        with open(os.path.join(folder, files.INFLIGHT), "rb") as f:
            mark = f.read(MARK_BYTES).rstrip(b"\0").decode(errors="replace")
    except OSError:
        return "", None
    phase, _, k = mark.partition(" ")
    return phase, int(k) if k.isdigit() else None


def graph_case(folder: str, k: int | None) -> str | None:
    """Graph k's case folder written ahead, when it was written whole."""
    if k is None:
        return None
    case = os.path.join(folder, files.GRAPHS, f"g{k}")
    return case if os.path.isfile(os.path.join(case, "meta.json")) else None


def crashed(folder: str) -> dict | None:
    """The failure record of a process that died by a fatal signal in a compiled graph (as failure.json would
    hold it, with "case" and "at", the report's time), or None: it needs the signal faulthandler named and the
    marker naming a graph written ahead."""
    try:
        with open(os.path.join(folder, files.FAULT), errors="replace") as f:
            fault = f.read()
        with open(os.path.join(folder, files.PROCESS)) as f:
            facts = json.load(f)
        at = os.path.getmtime(os.path.join(folder, files.FAULT))
    except (OSError, ValueError):
        return None
    m = re.search(r"Fatal Python error: ([A-Za-z ]+)", fault)
    phase, k = marked(folder)
    signal = FATAL.get(m.group(1).strip()) if m else None
    case = graph_case(folder, k)
    if signal is None or case is None:
        return None
    seen = len(os.listdir(os.path.join(folder, files.GRAPHS)))
    return {
        **facts,
        "kind": "crash",
        "phase": phase,
        "graph": k,
        "graphs_seen": seen,
        "case": case,
        "at": at,
        "signature": for_signal(getattr(_signal, signal)).to_dict(),
        "traceback": fault[-20000:],
    }


def killed(folder: str) -> dict | None:
    """The failure record of a process killed with no report (kill -9, the OOM killer) while the marker named a
    graph written ahead: that graph hung in its phase, for how long nobody knows; None when the marker names none
    or faulthandler named a fatal signal (crashed() reads that)."""
    phase, k = marked(folder)
    case = graph_case(folder, k)
    if case is None or crashed(folder) is not None:
        return None
    try:
        with open(os.path.join(folder, files.PROCESS)) as f:
            facts = json.load(f)
        at = os.path.getmtime(os.path.join(folder, files.INFLIGHT))
    except (OSError, ValueError):
        return None
    return {
        **facts,
        "kind": "hang",
        "phase": phase,
        "graph": k,
        "graphs_seen": len(os.listdir(os.path.join(folder, files.GRAPHS))),
        "case": case,
        "at": at,
        "signature": HANG.to_dict(),
        "seconds": None,
        "note": f"killed with no report while graph {k} was in {phase} (kill -9?): read from what was written ahead",
        "traceback": "",
    }
