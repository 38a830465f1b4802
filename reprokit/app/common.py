"""What every command's use case shares: the script check, a new run's folder, the recorded environment, Emit."""

from __future__ import annotations

import ast
import os

from reprokit.data.executor import ExecutorSettings
from reprokit.data.rundir import RunDir
from reprokit.errors import ReprokitError
from reprokit.report import keyed
from reprokit.report.env import allowed_env
from reprokit.report.redact import SECRET_NAME, live_identity
from reprokit.trial.runner import stop_all


def noop(*_a, **_k) -> None:
    """The Emit of a caller that wants no progress."""


def check_script(path: str) -> str:
    """Absolute path of a runnable Python script, or a ReprokitError saying what is wrong with it."""
    if not os.path.exists(path):
        raise ReprokitError(f"no such script: {path}")
    if os.path.isdir(path):
        raise ReprokitError(f"{path} is a directory; pass the Python script that calls torch.compile")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise ReprokitError(f"cannot read {path}: {e.strerror}") from None
    try:
        ast.parse(source, filename=path)
    except SyntaxError as e:
        raise ReprokitError(
            f"{path}:{e.lineno}: syntax error: {e.msg}; fix the script, then run reprokit again"
        ) from None
    return os.path.abspath(path)


def recorded_environment() -> dict:
    """The allowlisted environment for run.json; secret-named values are never written, not even locally."""
    return {k: ("<set, value withheld>" if SECRET_NAME.search(k) else v) for k, v in allowed_env().items()}


def record_secrets(run_dir: RunDir) -> None:
    """Keyed hashes of the secret-named variables' values and the identity to scrub, kept in the run folder, so
    that `pack` redacts the same from any shell, later (report/keyed.py says why this design)."""
    keyed.record(run_dir.path, identity=live_identity())


def new_run(output_dir: str, name: str, record: dict) -> RunDir:
    """A new run's folder under output_dir, named for what it runs: run.json holds `record`, and the keyed hashes of
    the secret-named variables are kept beside it for the pack."""
    run_dir = RunDir.create(output_dir, name)
    run_dir.write_json("run.json", record)
    record_secrets(run_dir)
    return run_dir


def default_jobs() -> int:
    """Trials at once on a machine without several GPUs: the CPU cores this process may use, at most 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def run_kind(run_dir: RunDir) -> str:
    """What made a run folder: "bisect", "doctor" or "model" (run.json's kind; bisect runs record none)."""
    return run_dir.read_json("run.json").get("kind") or "bisect"


def executor_of(run_dir: RunDir, given: ExecutorSettings | None = None) -> ExecutorSettings | None:
    """The executor the user named now, else the one run.json recorded (a run started on the cluster stays there)."""
    if given is not None:
        return given
    recorded = run_dir.read_json("run.json").get("executor") if os.path.exists(run_dir.file("run.json")) else None
    return ExecutorSettings.from_dict(recorded) if recorded else None


def stop_trials() -> None:
    """A signal ends the command: every trial it runs is killed, every cluster job cancelled, and none starts after."""
    stop_all()


def local_start(started: float, settings: ExecutorSettings | None) -> float | None:
    """The start the time plan counts from (minify/plan.py), for a run whose trials run here. Trials run as cluster
    jobs each wait on the scheduler: a 5-minute whole run is no target there, and the plan would cut the repro
    phases to their floor (relu_bug through SLURM: 270 s of bisect, its graph left at 9 nodes of 41)."""
    return started if settings is None or settings.name == "local" else None
