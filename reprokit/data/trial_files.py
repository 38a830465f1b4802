"""Readers of the files a trial child leaves in its trial folder."""
from __future__ import annotations

import os

from reprokit.data.rundir import read_json


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
