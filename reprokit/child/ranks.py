"""Ranks a script trial starts itself (torch.multiprocessing.spawn): what the trial process leaves in its
environment so that the start-up hook in child/starthook makes each of them a rank of the trial
(child/spawned)."""

from __future__ import annotations

import os

HOOK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starthook")
SPEC_VAR, DIR_VAR, PORT_VAR = "REPROKIT_TRIAL_SPEC", "REPROKIT_TRIAL_DIR", "REPROKIT_MASTER_PORT"
PID_VAR = "REPROKIT_TRIAL_PID"  # only the trial process's own children are its ranks (not compile workers')


def mark_environment(spec_path: str, trial_dir: str) -> None:
    """In the trial process: processes it starts inherit the spec, the folder, the hook and the trial's port."""
    os.environ[SPEC_VAR] = spec_path
    os.environ[DIR_VAR] = trial_dir
    os.environ[PID_VAR] = str(os.getpid())
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if HOOK_DIR not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [HOOK_DIR, *paths] if p)
    if "MASTER_PORT" in os.environ and "TORCHELASTIC_RUN_ID" not in os.environ:
        os.environ[PORT_VAR] = os.environ["MASTER_PORT"]
