"""Every Runner a command uses is built here, with its progress events, and opened and closed as one context."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from reprokit.data.events import Emit, Event
from reprokit.data.executor import ExecutorSettings
from reprokit.data.rundir import RunDir
from reprokit.trial.executors import remote_executor
from reprokit.trial.runner import Runner


def build_runner(
    run_dir: RunDir, emit: Emit, *, timeout: float, jobs: int = 1, settings: ExecutorSettings | None = None, **kwargs
) -> Runner:
    """The run's Runner, its trials said as events: local trials, or jobs on the cluster (as many at once as
    --slurm-max-jobs allows). kwargs: the Runner's own (devices, warm_scripts). The caller closes it (or uses
    open_runner)."""
    remote = remote_executor(settings, run_dir.path)
    return Runner(
        run_dir,
        timeout=timeout,
        jobs=settings.max_jobs if remote is not None and settings is not None else jobs,
        remote=remote,
        on_trial=lambda s, o, c: emit(Event.TRIAL, spec=s, outcome=o, cached=c),
        on_start=lambda s: emit(Event.TRIAL_START, spec=s),
        **kwargs,
    )


@contextmanager
def open_runner(
    run_dir: RunDir, emit: Emit, *, timeout: float, jobs: int = 1, settings: ExecutorSettings | None = None, **kwargs
) -> Iterator[Runner]:
    """build_runner's Runner, closed on the way out however the block ends: the warm worker stopped, and on a
    cluster every job still queued or running cancelled."""
    runner = build_runner(run_dir, emit, timeout=timeout, jobs=jobs, settings=settings, **kwargs)
    try:
        yield runner
    finally:
        runner.close()
