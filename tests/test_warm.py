"""Warm workers: graph trials fork from a process that imported torch once; a hang or crash still takes down
only its own trial, and the worker keeps serving."""
import os
import subprocess
import sys
import textwrap

import pytest

from reprokit.model import TrialSpec
from reprokit.rundir import RunDir
from reprokit.runner import Runner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A graph captured as Dynamo hands it to a backend: relu, then a multiply."""
    folder = tmp_path_factory.mktemp("warm")
    code = textwrap.dedent(f"""
        import torch
        from reprokit.fx.capture import capture_graph

        def backend(gm, inputs):
            capture_graph(gm, inputs, {str(folder / 'case')!r}, max_input_bytes=1 << 20, compile_args={{}})
            return gm.forward

        torch.compile(lambda x: torch.relu(x) * 2, backend=backend)(torch.randn(16, 16))
    """)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": REPO})
    return folder


def spec(case, stage, config=None, attempt=0):
    return TrialSpec(mode="graph", stage=stage, case=str(case / "case"), config=config or {}, cwd=str(case),
                     label=f"warm-{stage}", attempt=attempt)


@pytest.mark.slow
def test_warm_trials_survive_hangs_and_crashes(case, tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "1")
    runner = Runner(RunDir.create(str(tmp_path), "warm"), timeout=20)
    try:
        first = runner(spec(case, "eager"))
        assert first.kind == "pass", first
        assert runner.warm is not None and runner.warm.alive()
        from reprokit.runner import trial_record

        # torch was imported by the worker, not by the trial
        assert trial_record(first.trial_dir)["import_seconds"] < 0.1

        hang = runner(spec(case, "inductor", {"sleep_sec_TESTING_ONLY": 600}))
        assert hang.kind == "hang", hang
        with open(os.path.join(hang.trial_dir, "stacks.txt")) as f:
            assert "compile_fx" in f.read()  # the stack dump of the forked trial, caught mid-compile

        crash = runner(spec(case, "inductor", {"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"}))
        assert crash.failed and crash.kind in ("crash", "exception"), crash

        again = runner(spec(case, "aot_eager", attempt=1))
        assert again.kind == "pass" and runner.warm.alive()
    finally:
        runner.close()


def test_script_trials_and_trials_with_their_own_switches_start_cold():
    from reprokit.runner import warm_eligible

    assert warm_eligible(TrialSpec(mode="graph", stage="inductor"))
    assert warm_eligible(TrialSpec(mode="repro", stage="inductor"))
    assert not warm_eligible(TrialSpec(mode="script", stage="inductor"))
    assert not warm_eligible(TrialSpec(mode="graph", stage="inductor", env={"TORCH_LOGS": "output_code"}))
    assert not warm_eligible(TrialSpec(mode="graph", stage="inductor",
                                       subsystem={"backend": "inductor", "name": "lowerings", "max": 3}))
