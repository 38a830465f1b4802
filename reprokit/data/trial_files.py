"""Readers of the files a trial child leaves in its trial folder."""

from __future__ import annotations

import os

from reprokit.data.rundir import read_json

TEXT_LIMIT = 2_000_000  # bytes of one log read back (the tail: where a failure is; g++ can write hundreds of KB)


def read_tail(path: str, limit: int = TEXT_LIMIT) -> str | None:
    """A text file's last `limit` bytes (marked when cut), or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    return text if size <= limit else f"[... {size - limit} bytes cut ...]\n" + text


def read_observed(trial_dir: str) -> dict:
    """What an observing trial (doctor, bisect --kind slow) recorded: calls' seconds, graph breaks, metrics."""
    path = os.path.join(trial_dir, "observed.json")
    return read_json(path) if os.path.exists(path) else {}


def trial_record(trial_dir: str) -> dict:
    """What the trial child wrote: result.json when it finished, else state.json (up to a crash or hang);
    {} for no trial ("")."""
    if not trial_dir:
        return {}
    for name in ("result.json", "state.json"):
        path = os.path.join(trial_dir, name)
        if os.path.exists(path):
            return read_json(path)
    return {}


RECENT_CALLS = "calls"  # a trial's graphs, each as of its latest call (capture/recent_call, as capture/files names it)


def recent_calls(trial_dir: str) -> dict[int, str]:
    """{graph index: case folder} of the graphs a failing original saved as of their most recent call (rank 0's,
    under torchrun); {} when it saved none."""
    folder = os.path.join(trial_dir or "", RECENT_CALLS)
    if not os.path.isdir(folder):
        return {}
    out = {}
    for name in os.listdir(folder):
        case = os.path.join(folder, name)
        if name.startswith("g") and name[1:].isdigit() and os.path.exists(os.path.join(case, "meta.json")):
            out[int(name[1:])] = case
    return dict(sorted(out.items()))
