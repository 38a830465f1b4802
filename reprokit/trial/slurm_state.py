"""What the scheduler says: a job's state (scontrol while it remembers the job, else the job-completion log), and
the checks made before any trial (sbatch on PATH, the partition, an output folder the nodes can see)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from reprokit.errors import ReprokitError

# States in which a job will not change again; KILLED are those the scheduler, not the trial, ended.
KILLED = frozenset({"TIMEOUT", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL", "DEADLINE"})
ENDED = KILLED | {"COMPLETED", "FAILED", "CANCELLED", "OUT_OF_MEMORY"}


def job_state(job_id: str) -> str | None:
    """The job's state as the scheduler has it (PENDING, RUNNING, COMPLETED, TIMEOUT, ...), or None if unknown.
    sacct needs slurmdbd, which many small clusters lack: scontrol first, then the jobcomp log it names."""
    m = re.search(r"\bJobState=(\S+)", scontrol("show", "job", "-o", job_id))
    if m:
        return m.group(1).split("+")[0]
    return _jobcomp_state(job_id)


def scontrol(*args: str) -> str:
    """What `scontrol ARGS` prints; empty when it cannot be asked (the callers read "unknown" from that)."""
    try:
        return subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def jobs_with_comment(comment: str) -> list:
    """Ids of the jobs the scheduler still holds (queued or running) whose comment is this one."""
    try:
        out = subprocess.run(["squeue", "-h", "-o", "%i %k"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.split()[0] for line in out.splitlines() if line.split()[1:] == [comment]]


def _jobcomp_state(job_id: str) -> str | None:
    """The state jobcomp/filetxt wrote for a finished job (scontrol forgets it after MinJobAge)."""
    path = _jobcomp_location()
    if not path or not os.path.isfile(path):
        return None
    # An array task (submitit's "A_T") has a JobId of its own in the log, and names its array by ArrayJobId.
    array, _, task = job_id.partition("_")
    wanted = f"ArrayJobId={array} ArrayTaskId={task} " if task else f"JobId={job_id} "
    state = None
    with open(path, errors="replace") as f:
        for line in f:
            if wanted in line:
                m = re.search(r"\bJobState=(\S+)", line)
                state = m.group(1) if m else state
    return state


def _jobcomp_location() -> str | None:
    m = re.search(r"^JobCompLoc\s*=\s*(\S+)", scontrol("show", "config"), re.M)
    return m.group(1) if m else None


def check_scheduler(partition: str | None) -> None:
    """Bad input (one line, exit 2) when this machine cannot submit, or the partition does not exist."""
    if shutil.which("sbatch") is None:
        raise ReprokitError("--executor slurm: no sbatch on PATH (run reprokit where SLURM's commands are)")
    if partition:
        try:
            out = subprocess.run(
                ["sinfo", "-h", "-p", partition, "-o", "%P"], capture_output=True, text=True, timeout=60
            ).stdout
        except (OSError, subprocess.TimeoutExpired) as e:
            raise ReprokitError(
                f"--executor slurm: sinfo could not be asked about partition {partition}: {e}"
            ) from None
        if not out.strip():
            raise ReprokitError(
                f"--slurm-partition: no partition named {partition} (sinfo -h -p {partition} lists nothing)"
            )
