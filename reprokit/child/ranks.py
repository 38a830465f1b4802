"""Ranks a script trial starts itself (torch.multiprocessing.spawn): what the trial process leaves in its
environment so that the start-up hook in child/starthook makes each of them a rank of the trial
(child/spawned)."""

from __future__ import annotations

import os

from reprokit import settings

HOOK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starthook")


def mark_environment(spec_path: str, trial_dir: str) -> None:
    """In the trial process: processes it starts inherit the spec, the folder, the hook and the trial's port."""
    os.environ[settings.TRIAL_SPEC.name] = spec_path
    os.environ[settings.TRIAL_DIR.name] = trial_dir
    # Only the trial process's own children are its ranks (not compile workers').
    os.environ[settings.TRIAL_PID.name] = str(os.getpid())
    paths = settings.PYTHONPATH.get("").split(os.pathsep)
    if HOOK_DIR not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [HOOK_DIR, *paths] if p)
    port = settings.MASTER_PORT.get()
    if port is not None and not settings.TORCHELASTIC_RUN_ID.is_set():
        os.environ[settings.MASTER_PORT_PINNED.name] = port
