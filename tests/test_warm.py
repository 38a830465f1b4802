"""Warm workers: graph trials fork from a process that imported torch once; a hang or crash still takes down
only its own trial, and the worker keeps serving."""

import os
import subprocess
import sys
import textwrap

import pytest

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial.runner import Runner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    """A graph captured as Dynamo hands it to a backend: relu, then a multiply."""
    folder = tmp_path_factory.mktemp("warm")
    code = textwrap.dedent(f"""
        import torch
        from reprokit.fx.capture import capture_graph

        def backend(gm, inputs):
            capture_graph(gm, inputs, {str(folder / "case")!r}, max_input_bytes=1 << 20, compile_args={{}})
            return gm.forward

        torch.compile(lambda x: torch.relu(x) * 2, backend=backend)(torch.randn(16, 16))
    """)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": REPO})
    return folder


def spec(case, stage, config=None, attempt=0):
    return TrialSpec(
        mode="graph",
        stage=stage,
        case=str(case / "case"),
        config=config or {},
        cwd=str(case),
        label=f"warm-{stage}",
        attempt=attempt,
    )


@pytest.mark.slow
def test_warm_trials_survive_hangs_and_crashes(case, tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_WARM", "1")
    runner = Runner(RunDir.create(str(tmp_path), "warm"), timeout=20)
    try:
        first = runner(spec(case, "eager"))
        assert first.kind == "pass", first
        assert runner.fork_pool is not None and runner.fork_pool.alive()
        from reprokit.data.trial_files import trial_record

        # torch was imported by the worker, not by the trial
        assert trial_record(first.trial_dir)["import_seconds"] < 0.1

        hang = runner(spec(case, "inductor", {"sleep_sec_TESTING_ONLY": 600}))
        assert hang.kind == "hang", hang
        with open(os.path.join(hang.trial_dir, "stacks.txt")) as f:
            assert "compile_fx" in f.read()  # the stack dump of the forked trial, caught mid-compile

        # a C++ build from an empty cache (a GPU machine's worker skips the CPU probe) is slow
        runner = runner.with_policy(timeout=300)
        crash = runner(spec(case, "inductor", {"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"}))
        assert crash.failed and crash.kind in ("crash", "exception"), crash

        again = runner(spec(case, "aot_eager", attempt=1))
        assert again.kind == "pass" and runner.fork_pool.alive()
    finally:
        runner.close()


def test_which_trials_may_fork_from_the_warm_worker():
    from reprokit.trial.fork_policy import fork_eligible

    lowerings = {"backend": "inductor", "name": "lowerings", "max": 3}
    assert fork_eligible(TrialSpec(mode="graph", stage="inductor"))
    assert fork_eligible(TrialSpec(mode="repro", stage="inductor"))
    # torch's bisect counters and logging are read again in the fork, so those trials may fork too
    assert fork_eligible(TrialSpec(mode="graph", stage="inductor", subsystem=lowerings))
    assert fork_eligible(TrialSpec(mode="graph", stage="inductor", env={"TORCH_LOGS": "output_code"}))
    # whole scripts only when the caller read the script and found it safe to fork
    assert not fork_eligible(TrialSpec(mode="script", stage="inductor"))
    assert fork_eligible(TrialSpec(mode="script", stage="none"), scripts=True)
    # a variable torch reads only at import, or a torchrun launch: cold
    assert not fork_eligible(
        TrialSpec(mode="script", stage="inductor", env={"TORCHINDUCTOR_MAX_AUTOTUNE": "1"}), scripts=True
    )
    assert not fork_eligible(TrialSpec(mode="model", stage="user", ranks=2), scripts=True)
    # the repro's verification claims a fresh interpreter: never a fork
    assert not fork_eligible(TrialSpec(mode="script", stage="user", fresh_interpreter=True), scripts=True)


@pytest.mark.parametrize(
    "body, safe",
    [
        ("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n", True),
        ("import os\nos.environ['TORCHINDUCTOR_MAX_AUTOTUNE'] = '1'\nimport torch\n", False),
        ("import os\nos.environ.setdefault('TORCH_LOGS', 'recompiles')\n", False),
        ("from os import putenv\nputenv('TORCH_COMPILE_DEBUG', '1')\n", False),
        ("import multiprocessing as mp\nmp.set_start_method('spawn')\n", False),
    ],
)
def test_scripts_that_set_their_own_environment_run_cold(tmp_path, body, safe):
    from reprokit.app.runners import forks_cleanly

    script = tmp_path / "train.py"
    script.write_text(body)
    assert forks_cleanly(str(script)) is safe


@pytest.mark.slow
def test_forked_script_trials_obey_dynamo_disable_bisect_counters_and_logs(tmp_path, monkeypatch):
    """The switches a fork cannot have had at import: TORCHDYNAMO_DISABLE, TORCH_BISECT_*, TORCH_LOGS/TRACE."""
    import shutil

    from reprokit.data.trial_files import trial_record

    monkeypatch.setenv("REPROKIT_WARM", "1")
    cases = os.path.join(REPO, "tests", "cases")
    for name in ("relu_compile_error.py", "_blocks.py"):
        shutil.copy(os.path.join(cases, name), tmp_path / name)
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "warm-script"), timeout=300, warm_scripts=True)

    def trial(stage, label, **kw):
        out = runner(
            TrialSpec(
                mode="script",
                stage=stage,
                script=str(tmp_path / "relu_compile_error.py"),
                cwd=str(tmp_path),
                label=label,
                **kw,
            )
        )
        assert trial_record(out.trial_dir)["import_seconds"] < 0.1, "ran cold"  # forked, not started afresh
        return out

    try:
        no_compile = trial("none", "no-compile")
        assert no_compile.kind == "pass" and no_compile.graphs == 0  # Dynamo never handed a graph over
        failing = trial("inductor", "inductor", env={"TORCH_LOGS": "output_code", "TORCH_TRACE": "{trial_dir}/trace"})
        assert failing.kind == "exception" and "CppCompileError" in failing.signature.message
        assert failing.counters["inductor/lowerings"] > 10
        assert os.listdir(os.path.join(failing.trial_dir, "trace"))
        with open(os.path.join(failing.trial_dir, "stderr.txt")) as f:
            assert "Output code" in f.read()
        lowerings_off = trial(
            "inductor", "lowerings-off", subsystem={"backend": "inductor", "name": "lowerings", "max": -1}
        )
        assert lowerings_off.kind == "pass", lowerings_off
        passes_off = trial(
            "inductor",
            "passes-off",
            subsystem={
                "backend": "inductor",
                "names": ["pre_grad_passes", "joint_graph_passes", "post_grad_passes"],
                "max": -1,
            },
        )
        assert failing.signature.matches(passes_off.signature)
        everything_off = trial(
            "inductor",
            "all-off",
            subsystem={"backend": "inductor", "names": ["post_grad_passes", "lowerings"], "max": -1},
        )
        assert everything_off.kind == "pass"
    finally:
        runner.close()


@pytest.mark.parametrize("warm", ["0", "1"])
def test_a_running_trial_takes_a_limit_set_after_it_started(tmp_path, monkeypatch, warm):
    """bisect starts the original before the no-compile baseline has set the run's limit: a hang must still be
    cut at the limit the baseline sets, not at the generous one the trial started with."""
    import threading
    import time

    monkeypatch.setenv("REPROKIT_WARM", warm)
    script = tmp_path / "sleeps.py"
    asleep = tmp_path / "asleep"
    script.write_text(f"import pathlib, time\npathlib.Path({str(asleep)!r}).touch()\ntime.sleep(300)\n")
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "limit"), timeout=600, warm_scripts=True)
    limit = [600.0]  # asked while the trial runs, as bisect/start.py's limits are

    def shrink_once_asleep():
        # Only once the script sleeps: a cold interpreter may take seconds to import torch on a slow machine.
        deadline = time.monotonic() + 300
        while not asleep.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        limit[0] = 1.0  # already past: the trial must be cut at once

    threading.Thread(target=shrink_once_asleep, daemon=True).start()
    started = time.monotonic()
    try:
        sleeps = TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label="sleeps")
        out = runner(sleeps, limit=lambda: limit[0])
    finally:
        runner.close()
    assert out.kind == "hang", out
    assert time.monotonic() - started < 200
    with open(os.path.join(out.trial_dir, "stacks.txt")) as f:
        assert "sleeps.py" in f.read()  # the stack dump shows where it hung


def test_a_fork_sees_its_own_bisect_switches_though_torch_cached_the_workers():
    """torch caches each TORCH_BISECT_* read (compiler_bisector.get_env_val): when the worker imported that module
    early, a forked trial must still obey the variables its runner set."""
    code = textwrap.dedent("""
        import os
        from torch._inductor import compiler_bisector as cb  # the worker's (empty) answers are cached now
        from reprokit import compat

        assert cb.CompilerBisector.get_subsystem() is None
        os.environ.update(TORCH_BISECT_BACKEND="inductor", TORCH_BISECT_SUBSYSTEM="lowerings", TORCH_BISECT_MAX="3")
        compat.reread_env_switches()  # what a forked trial does first
        assert cb.CompilerBisector.bisection_enabled
        assert cb.CompilerBisector.get_backend() == "inductor"
        assert cb.CompilerBisector.get_subsystem() == "lowerings"
        assert cb.get_env_val("TORCH_BISECT_MAX") == "3"
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCH_BISECT")}
    subprocess.run([sys.executable, "-c", code], check=True, env={**env, "PYTHONPATH": REPO}, cwd=REPO)


def test_a_fork_that_cannot_prepare_torch_runs_its_trial_cold(tmp_path, monkeypatch):
    """reprokit failing to reuse the worker's torch (here: a compat call torch no longer supports) is not the
    user's failure: the trial runs cold and says so, and later trials no longer fork."""
    from reprokit.data.trial_files import trial_record

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        textwrap.dedent("""
        import reprokit.compat

        def reread_env_switches():
            raise AttributeError("this torch has no CompilerBisector")

        reprokit.compat.reread_env_switches = reread_env_switches
    """)
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(hook), REPO]))
    monkeypatch.setenv("REPROKIT_WARM", "1")
    script = tmp_path / "passes.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n")
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "fork-setup"), timeout=300, warm_scripts=True)
    try:
        first = runner(TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label="a"))
        assert (
            runner.fork_pool is not None and not runner.fork_pool.alive()
        )  # every fork would fail alike: no more forks
        second = runner(
            TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label="b", attempt=1)
        )
    finally:
        runner.close()
    assert first.kind == "pass", first
    assert "started cold" in first.note and "no CompilerBisector" in first.note
    assert trial_record(first.trial_dir)["kind"] == "pass"
    assert second.kind == "pass" and "started cold" not in second.note
