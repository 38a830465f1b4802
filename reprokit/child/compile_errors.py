"""A C++ compile error met earlier in the same run, replayed instead of running the compiler on the same input again.

inductor's kernel cache keeps the binaries of kernels that compiled, keyed by their source, so a trial compiles only
the kernels that changed; a kernel that failed to compile leaves no binary, and every trial that still holds it ran
g++ on it again (0.4-0.9 s of a 1.5-2.5 s graph trial on 2 cores, for the same error). Its error is kept here, keyed
by the command line, the working folder and every file the command names, byte for byte, and raised again as
inductor raises it. Only diagnostics of the source (`file:line:col: error:`) are kept, never a compiler that was
killed or crashed, and the folder belongs to one run: an environment fixed between runs is compiled afresh. Trials
that claim a fresh process (repro verification) never replay (child/main.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Callable

from reprokit import settings
from reprokit.data.rundir import write_json_atomic

_DIAGNOSTIC = re.compile(r":\d+:\d+: (?:fatal )?error:")
_NOT_THE_SOURCE = ("internal compiler error", "Killed", "terminated", "No space left", "Bad address")


def key_of(cmd_line: str, cwd: str) -> str:
    """sha256 of the command, its folder and the bytes of every file it names."""
    h = hashlib.sha256(f"{cmd_line}\0{cwd}".encode())
    for token in shlex.split(cmd_line):
        path = token if os.path.isabs(token) else os.path.join(cwd or ".", token)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:32]


def keeps(output: str) -> bool:
    """Whether a failed compile's output is the compiler's verdict on the source (the same input fails the same)."""
    return bool(_DIAGNOSTIC.search(output)) and not any(s in output for s in _NOT_THE_SOURCE)


def install(on_replay: Callable[[str], None]) -> bool:
    """Replay kept errors in this process when the trial was given a folder for them (REPROKIT_COMPILE_ERRORS)."""
    from reprokit import compat

    folder = settings.COMPILE_ERRORS.get()
    if not folder:
        return False
    return compat.wrap_cpp_compile(replaying(folder, on_replay))


def replaying(folder: str, on_replay: Callable[[str], None]) -> Callable[[Callable, Callable], Callable]:
    """A wrapper for inductor's compiler run (cmd_line, cwd): a kept error of the same input is raised again by
    inductor's own code (fail(output): its next compiler run fails so), else it runs and the error it raises is kept
    when keeps(); on_replay(the kept output's first line) on each replay."""

    def wrap(run: Callable, fail: Callable[[str], None]) -> Callable:
        def run_compile_cmd(cmd_line: str, cwd: str, *args, **kwargs):
            key = key_of(cmd_line, cwd)
            kept = _read(os.path.join(folder, key + ".json"))
            if kept is not None:
                on_replay(next(iter(kept["output"].strip().splitlines()), "")[:200])
                fail(kept["output"])
                return run(cmd_line, cwd, *args, **kwargs)
            try:
                return run(cmd_line, cwd, *args, **kwargs)
            except Exception as e:  # inductor's CppCompileError (cmd, output), whatever this torch calls it
                output, cmd = getattr(e, "output", None), getattr(e, "cmd", None)
                if isinstance(output, str) and isinstance(cmd, list) and keeps(output):
                    os.makedirs(folder, exist_ok=True)
                    write_json_atomic(os.path.join(folder, key + ".json"), {"cmd": cmd, "output": output})
                raise

        return run_compile_cmd

    return wrap


def _read(path: str) -> dict | None:
    try:
        with open(path) as f:
            kept = json.load(f)
        return kept if isinstance(kept.get("output"), str) else None
    except (OSError, ValueError, AttributeError):
        return None
