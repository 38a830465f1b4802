"""A Runner for tests that ask real trials of scripts: its trials fork from a worker that imported torch once."""

import contextlib
import os
import pathlib
from collections.abc import Iterator

from reprokit.data.rundir import RunDir
from reprokit.trial.runner import Runner


@contextlib.contextmanager
def warm_runner(folder: pathlib.Path) -> Iterator[Runner]:
    """A runner in folder/run, with folder as the run's cwd (the scripts go there); closed, its worker too, on exit."""
    run = RunDir(str(folder / "run"))
    os.makedirs(run.path)
    run.write_json("run.json", {"options": {"cwd": str(folder)}})
    runner = Runner(run, timeout=300, warm_scripts=True)
    try:
        yield runner
    finally:
        runner.close()
