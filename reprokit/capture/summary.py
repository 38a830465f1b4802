"""capture.json: one summary every process of the job adds its line to, under a lock on the file itself (the
env switch has no parent process to gather the ranks' lines)."""

from __future__ import annotations

import fcntl
import json
import os

from reprokit.capture import files


def merge_summary(root: str, rank: str, line: dict) -> None:
    """Add (or replace) this rank's line in root/capture.json."""
    from reprokit import compat

    os.makedirs(root, exist_ok=True)
    fd = os.open(os.path.join(root, files.SUMMARY), os.O_RDWR | os.O_CREAT, 0o600)
    with os.fdopen(fd, "r+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes
        text = f.read()
        try:
            summary = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError:
            summary = {}
        summary.setdefault("torch_version", compat.TORCH_VERSION)
        summary.setdefault("ranks", {})[rank] = line
        f.seek(0)
        f.truncate()
        f.write(json.dumps(summary, indent=1, sort_keys=True))
