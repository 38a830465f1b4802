"""Every Runner a command uses is built here, with its progress events, and opened and closed as one context; a
script's warm options (whether its trials fork from the warm worker) are decided here too, as it opens."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from reprokit.bisect.session import BisectOptions
from reprokit.data.events import Emit, Event
from reprokit.data.executor import ExecutorSettings
from reprokit.data.rundir import RunDir
from reprokit.trial.executors import remote_executor
from reprokit.trial.preload import script_imports
from reprokit.trial.runner import Runner


@contextmanager
def open_runner(
    run_dir: RunDir,
    emit: Emit,
    *,
    timeout: float,
    jobs: int = 1,
    settings: ExecutorSettings | None = None,
    devices: list | None = None,
    warm_script: str | None = None,
) -> Iterator[Runner]:
    """The run's Runner, its trials said as events: local trials, or jobs on the cluster (as many at once as
    --slurm-max-jobs allows); pinned to `devices`, one trial each; warm_script: the script whose trials fork from
    the warm worker where it forks cleanly (None: every trial a plain interpreter). Closed on the way out however
    the block ends: the warm worker stopped, and on a cluster every job still queued or running cancelled."""
    warm = script_forks(warm_script) if warm_script else {}
    remote = remote_executor(settings, run_dir.path)
    runner = Runner(
        run_dir,
        timeout=timeout,
        jobs=settings.max_jobs if remote is not None and settings is not None else jobs,
        remote=remote,
        on_trial=lambda s, o, c: emit(Event.TRIAL, spec=s, outcome=o, cached=c),
        on_start=lambda s: emit(Event.TRIAL_START, spec=s),
        devices=devices,
        **warm,
    )
    try:
        yield runner
    finally:
        runner.close()


def open_script_runner(
    run_dir: RunDir, emit: Emit, opts: BisectOptions, devices: list | None, settings: ExecutorSettings | None
) -> AbstractContextManager[Runner]:
    """open_runner for a script's bisect (a fresh one's and a resumed one's). settings: the executor run.json
    records, handed in as the value rather than read back from it."""
    # --kind slow compares the timings of whole runs: those stay plain interpreters, like the user's own runs.
    warm = opts.script if opts.kind == "failure" else None
    timeout = opts.timeout or 600.0
    return open_runner(
        run_dir, emit, timeout=timeout, jobs=opts.jobs, settings=settings, devices=devices, warm_script=warm
    )


def forks_cleanly(script: str) -> bool:
    """Whether the script may run as a fork of a worker that imported torch already: not when it sets
    environment variables (torch reads many at import, so in a fork they would come too late) or re-executes
    itself. A script that hides such things in a local module is not caught; REPROKIT_WARM=0 runs it cold."""
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name in ("environ", "putenv", "execv", "execve", "execvp", "execl", "execle", "set_start_method"):
            return False
    return True


def script_forks(script: str) -> dict:
    """The Runner's warm options for a script: its trials fork from the warm worker when it forks cleanly, and the
    worker loads the script's own imports too (a source reduction's hundreds of candidates import them once)."""
    clean = forks_cleanly(script)
    return {"warm_scripts": clean, "warm_imports": script_imports(script) if clean else ()}
