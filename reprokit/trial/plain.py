"""The script run exactly as its user runs it: `python script.py args`, a fresh interpreter, the user's cwd and
environment, nothing of reprokit's in the process (no router, no start-up hook, no REPROKIT_* variables).

Reprokit's own instrumentation can hide a failure (issue 45: the router, a new backend object per torch.compile
call, changes what Dynamo's cache reuses); this run is the ground truth the instrumented original is checked against.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from reprokit import settings
from reprokit.child.ranks import HOOK_DIR
from reprokit.data import signature as sig
from reprokit.data.records import Outcome, Signature
from reprokit.data.rundir import private_opener
from reprokit.trial import reaper
from reprokit.trial.launch import kill_group

# The last line of a Python traceback: "module.Type: message" or "Type" alone.
_EXCEPTION_LINE = re.compile(
    r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failed|Failure)\w*)(?::\s?(.*))?$"
)


def plain_env(environ: dict | None = None, extra: dict | None = None) -> dict:
    """The user's environment without reprokit's variables, plus `extra` (a stage switch torch itself reads)."""
    # reprokit's start-up hook is on the path where reprokit itself was started by one (a capture, a trial's rank)
    env = settings.without_reprokit(os.environ if environ is None else environ, (HOOK_DIR,))
    env.update(extra or {})
    return env


def run_plain(
    script: str,
    argv: tuple,
    cwd: str,
    folder: str,
    timeout: float,
    extra_env: dict | None = None,
    python: str = sys.executable,
    launcher: tuple = (),
) -> Outcome:
    """One plain run of the script (`python [launcher] script argv`: torchrun's module for several ranks), its output
    in `folder`, killed (its whole group) at `timeout` seconds."""
    os.makedirs(folder, exist_ok=True)
    out_path, err_path = os.path.join(folder, "stdout.txt"), os.path.join(folder, "stderr.txt")
    started = time.monotonic()
    with open(out_path, "wb", opener=private_opener) as out, open(err_path, "wb", opener=private_opener) as err:
        proc = subprocess.Popen(
            [python, *launcher, script, *argv],
            cwd=cwd or None,
            env=plain_env(extra=extra_env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=reaper.die_with_parent,
        )
        reaper.watch(proc.pid)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            kill_group(proc)  # on a timeout, Ctrl-C, or children the script left behind
            reaper.unwatch(proc.pid)
    with open(err_path, errors="replace") as f:
        stderr = f.read()[-200_000:]
    kind, signature = judged(proc.returncode, timed_out, stderr)
    return Outcome(
        kind=kind,
        signature=signature,
        seconds=round(time.monotonic() - started, 3),
        returncode=proc.returncode,
        trial_dir=folder,
        traceback=last_traceback(stderr),
        compiled=True,
    )


def judged(returncode: int | None, timed_out: bool, stderr: str) -> tuple[str, Signature]:
    """(kind, signature) of a plain run from how it ended and what it printed last."""
    if timed_out:
        return "hang", sig.HANG
    if returncode == 0:
        return "pass", sig.PASS
    if returncode is not None and returncode < 0:
        return "crash", sig.for_signal(-returncode)
    found = exception_of(last_traceback(stderr))
    if found is None:
        return "exit", sig.for_exit(returncode or 1)
    exc_type, message = found
    return "exception", Signature("exception", exc_type, sig.normalise_message(message), None)


def last_traceback(stderr: str) -> str:
    """The last traceback the run printed, or ''."""
    at = stderr.rfind("Traceback (most recent call last):")
    return stderr[at:].strip() if at >= 0 else ""


def exception_of(traceback: str) -> tuple[str, str] | None:
    """(type, message) the traceback ends with: its last line that names an exception."""
    for line in reversed(traceback.splitlines()):
        m = _EXCEPTION_LINE.match(line.strip())
        if m and not line.startswith(" "):
            return m.group(1).rsplit(".", 1)[-1], m.group(2) or ""
    return None
