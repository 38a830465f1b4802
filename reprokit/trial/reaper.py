"""No trial outlives reprokit: a small watch process kills every trial's process group once reprokit is gone.

SIGKILL runs no handler in reprokit, so the watch is one the kernel triggers: the reaper holds the read end of a
pipe whose write end only reprokit holds. Reprokit writes "+PGID" as a trial's group starts and "-PGID" once it
is gone, and "+/PATH", "-/PATH" for a trial's temporary folder; when reading hits EOF (reprokit died, any way, or
exited) the reaper SIGKILLs every group still listed, then removes every folder still listed.
Run as `python -m reprokit.trial.reaper`; stdlib only, so it starts in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading

from reprokit import settings

_PR_SET_PDEATHSIG = 1

_lock = threading.Lock()
_proc: subprocess.Popen | None = None
_owner = 0  # the pid that started _proc: a fork of reprokit must start its own
_groups: set = set()  # the groups this process told the reaper of, still running (kill_all)


def watch(pgid: int) -> None:
    """Tell the reaper a trial's process group started."""
    with _lock:
        _groups.add(pgid)
    _tell(f"+{pgid}")


def unwatch(pgid: int) -> None:
    """Tell the reaper a trial's process group is gone (its id may be reused by a stranger's group)."""
    with _lock:
        _groups.discard(pgid)
    _tell(f"-{pgid}")


def watch_folder(path: str) -> None:
    """Tell the reaper of a temporary folder to remove if reprokit dies before it does (an absolute path)."""
    _tell(f"+{path}")


def unwatch_folder(path: str) -> None:
    """Tell the reaper the folder is gone."""
    _tell(f"-{path}")


def kill_all() -> list:
    """SIGKILL every group still running now, as the reaper would once reprokit is gone (Ctrl-C: the run stops
    without waiting out its trials); the group ids."""
    with _lock:
        groups = sorted(_groups)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return groups


def _tell(line: str) -> None:
    global _proc, _owner
    with _lock:
        for _ in range(2):  # a reaper that died (killed by hand) is started again once
            if _proc is None or _owner != os.getpid() or _proc.poll() is not None:
                _proc, _owner = _start(), os.getpid()
            assert _proc.stdin is not None  # a pipe
            try:
                _proc.stdin.write(line.encode() + b"\n")
                _proc.stdin.flush()
                return
            except (BrokenPipeError, OSError):
                _proc = None


def _start() -> subprocess.Popen:
    # Its own session: Ctrl-C at the terminal reaches reprokit's group, never the reaper, which must outlive it.
    # The package's folder on the path: reprokit may run from a checkout that is not installed.
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, settings.PYTHONPATH.get()) if p)}
    return subprocess.Popen(
        [sys.executable, "-m", "reprokit.trial.reaper"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )


def die_with_parent() -> None:
    """In a child (Popen's preexec_fn, or a fresh fork): SIGKILL it when the thread that started it dies, a second
    line behind the reaper for the moment between its start and watch(). Linux only; elsewhere nothing."""
    try:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (AttributeError, OSError):
        pass


def _load_libc():
    try:
        return ctypes.CDLL(None, use_errno=True)  # loaded here, not in the forked child, which must not import
    except OSError:
        return None


_libc = _load_libc()


def serve(stream) -> None:
    """The reaper's loop: track the groups and folders it is told of; at EOF kill the groups still listed, then
    remove the folders (nothing writes there any more)."""
    groups: set[int] = set()
    folders: set[bytes] = set()
    for raw in iter(stream.readline, b""):
        line = raw.rstrip(b"\n")
        sign, rest = line[:1], line[1:]
        if rest.startswith(b"/"):
            (folders.add if sign == b"+" else folders.discard)(rest)
            continue
        try:
            pgid = int(rest)
        except ValueError:
            continue
        if sign == b"+":
            groups.add(pgid)
        elif sign == b"-":
            groups.discard(pgid)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if folders:
        import shutil
        import time

        time.sleep(0.2)  # a killed process's last open files are closed by the kernel as it exits
        for path in folders:
            shutil.rmtree(os.fsdecode(path), ignore_errors=True)


if __name__ == "__main__":
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # only the pipe's EOF ends it, after it has done its job
    serve(sys.stdin.buffer)
