"""capture.json: one summary every process of the job adds its line to, under a lock on the file itself (the
env switch has no parent process to gather the ranks' lines)."""

from __future__ import annotations

import fcntl
import json
import os

from reprokit.capture import files


def merge_summary(root: str, rank: str, line: dict) -> None:
    """Add (or replace) this rank's line in root/capture.json."""
    _update(root, lambda summary: summary.setdefault("ranks", {}).__setitem__(rank, line))


def note_job(root: str, job: dict) -> None:
    """How the job was started and how it ended, in root/capture.json (written as it starts: a capture whose
    every process was killed still has one)."""
    _update(root, lambda summary: summary.setdefault("job", {}).update(job), versioned=False)


def _update(root: str, change, versioned: bool = True) -> None:
    """change(summary) under the file's lock; the torch version noted by a process that imported torch (the
    launcher's side does not: it starts the job at once)."""
    os.makedirs(root, exist_ok=True)
    fd = os.open(os.path.join(root, files.SUMMARY), os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes
        text = f.read()
        try:
            summary = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            summary = {}
        if versioned:
            from reprokit import compat

            summary.setdefault("torch_version", compat.TORCH_VERSION)
        summary.setdefault("ranks", {})
        change(summary)
        f.seek(0)
        f.truncate()
        f.write(json.dumps(summary, indent=1, sort_keys=True))
