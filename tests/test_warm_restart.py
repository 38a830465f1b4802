"""A forked trial that kills the warm worker costs that trial: the next one forks from a new worker."""

import pytest

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.data.trial_files import trial_record
from reprokit.trial.runner import Runner


@pytest.mark.slow
def test_a_trial_that_kills_its_worker_leaves_later_trials_warm(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "1")
    (tmp_path / "kills.py").write_text("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
    (tmp_path / "fine.py").write_text("import torch\nprint(torch.ones(2).sum())\n")
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "restart"), timeout=120, warm_scripts=True)

    def trial(name):
        return runner(
            TrialSpec(mode="script", stage="none", script=str(tmp_path / name), cwd=str(tmp_path), label=name)
        )

    try:
        killed = trial("kills.py")
        assert killed.kind != "pass", killed
        assert runner.fork_pool is not None and not runner.fork_pool.alive()
        after = trial("fine.py")
        assert after.kind == "pass", after
        assert trial_record(after.trial_dir)["import_seconds"] < 0.1, "ran cold"
        assert runner.forks.restarts == 1
    finally:
        runner.close()
