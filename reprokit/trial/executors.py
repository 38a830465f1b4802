"""Where a trial runs, behind one seam: local (this machine's processes, the Runner's own launcher) or slurm (a job
per trial, trial.slurm). The search never sees which."""

from __future__ import annotations

import os
import shutil
import time
import uuid

from reprokit.data.executor import ExecutorSettings
from reprokit.errors import ReprokitError
from reprokit.trial.slurm_state import ENDED, check_scheduler, job_state


def remote_executor(settings: ExecutorSettings | None, run_path: str):
    """None for the local executor (the Runner launches trials itself), else the cluster's, its job logs in the
    run folder's slurm/."""
    if settings is None or settings.name == "local":
        return None
    from reprokit.trial.slurm import make_slurm

    return make_slurm(settings, os.path.join(run_path, "slurm"))


def check_executor(settings: ExecutorSettings | None, output_dir: str) -> None:
    """Bad input before any trial: no sbatch, no such partition, or an output folder the nodes cannot see (a first
    tiny job writes a file there; this process must read it back)."""
    if settings is None or settings.name == "local":
        return
    check_scheduler(settings.partition)
    from reprokit.trial.slurm import make_slurm, write_token

    os.makedirs(output_dir, exist_ok=True)
    probe_dir = os.path.join(os.path.abspath(output_dir), f".slurm-check-{uuid.uuid4().hex[:8]}")
    token = uuid.uuid4().hex
    executor = make_slurm(settings, probe_dir)
    try:
        job = executor.executor.submit(write_token, os.path.join(probe_dir, "token"), token)
        state = None
        while state not in ENDED:
            time.sleep(0.5)
            state = job_state(job.job_id)
        seen = _read(os.path.join(probe_dir, "token"))
    except BaseException:
        executor.cancel_all()
        raise
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)
    if seen != token:
        raise ReprokitError(
            f"--output-dir {output_dir}: the cluster's nodes cannot see it (a first job, "
            f"{job.job_id}, ended {state} without writing there); name a shared folder"
        )


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None
