"""End to end on CPU with gloo, two ranks: a DDP step whose ranks the script spawns itself, a tensor-parallel
block under torchrun (its all-reduce inside the compiled graph), a script that wants a launcher and got none,
and doctor on torch.compile(DDP(model))."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

CASES = pathlib.Path(__file__).parent / "dist_cases"
REPO = pathlib.Path(__file__).parent.parent


@pytest.fixture
def project(tmp_path):
    work = tmp_path / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


def reprokit(project, *args, timeout=1800):
    return subprocess.run([sys.executable, "-m", "reprokit", *args], cwd=project, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})


def bisected(project, *args):
    p = reprokit(project, "bisect", *args, "--json", "--no-configs", "--no-pack", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def check_relu_lowering(data):
    assert data["failing_stage"] == "inductor", data
    assert data["subsystem"]["name"] == "lowerings" and "aten.relu" in data["subsystem"]["detail"], data["subsystem"]
    assert data["repro_verified"] is True, data


@pytest.mark.slow
def test_ranks_the_script_spawns_run_under_the_stage_and_bisect_to_the_relu_lowering(project):
    data = bisected(project, "ddp_spawn_relu.py")
    check_relu_lowering(data)
    assert data["kind"] == "exception" and data["signature"]["message"].startswith("CppCompileError"), data
    repro = subprocess.run([sys.executable, data["repro"]], capture_output=True, text=True, timeout=600)
    assert repro.returncode != 0 and "CppCompileError" in repro.stderr


@pytest.mark.slow
def test_a_torchrun_job_with_a_collective_in_the_graph_gets_a_one_process_repro(project):
    data = bisected(project, "--nproc-per-node", "2", "tp_torchrun_relu.py")
    check_relu_lowering(data)
    repro = pathlib.Path(data["repro"]).read_text()
    assert "init_process_group('fake'" in repro  # the all-reduce runs in one process on a fake group
    run = subprocess.run([sys.executable, data["repro"]], capture_output=True, text=True, timeout=600)
    assert run.returncode != 0, run.stdout + run.stderr


@pytest.mark.slow
def test_env_init_without_a_launcher_says_how_to_launch_it(project):
    p = reprokit(project, "bisect", "tp_torchrun_relu.py", "-o", str(project / "artifacts"))
    assert (p.returncode, p.stderr.splitlines()[-1]) == (2, (
        "reprokit: tp_torchrun_relu.py initialises torch.distributed from the environment (env://) but no launcher "
        "started it: run reprokit bisect --nproc-per-node N tp_torchrun_relu.py")), p.stderr[-2000:]


@pytest.mark.slow
def test_doctor_says_a_compiled_ddp_compiled_nothing_on_the_users_line(project):
    p = reprokit(project, "doctor", "ddp_compiled_wrapper.py", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert "compiled: DistributedDataParallel at ddp_compiled_wrapper.py:14: 0 graph(s), 0 ops" in lines
    assert (" 1. ddp_compiled_wrapper.py:14 nothing was compiled: torch.compile of DistributedDataParallel skips its "
            "forward, so all 4 calls ran eager (no graph reached the compiler)") in lines
    assert "                           > step = torch.compile(DDP(model))" in lines
    assert "                           fix: compile the module, then wrap it: `DDP(torch.compile(model))`" in lines
    breaks = [ln for ln in lines if "graph break" in ln]
    # Every break is placed at the user's line and marked torch's, never at contextlib's or torch's own file.
    assert breaks and all(ln.split()[1] == "ddp_compiled_wrapper.py:14" and "inside torch (" in ln for ln in breaks)
