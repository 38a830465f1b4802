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

from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "dist_cases"
REPO = pathlib.Path(__file__).parent.parent


@pytest.fixture
def project(tmp_path):
    work = tmp_path / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


def reprokit(project, *args, timeout=1800):
    return subprocess.run(
        [sys.executable, "-m", "reprokit", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def bisected(project, *args):
    p = reprokit(project, "bisect", *args, "--json", "--no-configs", "--no-pack", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def check_relu_lowering(data):
    assert data["failing_stage"] == "inductor", data
    assert data["subsystem"]["name"] == "lowerings" and "aten.relu" in data["subsystem"]["detail"], data["subsystem"]
    assert data["repro_verified"] is True, data


@pytest.mark.slow
@opt_in(
    "89 s in CI at 8e43f58): ranks the script spawns, bisected in place to the relu lowering with a "
    "verified repro, are tested by test_spawned_ranks.py's FSDP2 job"
)
def test_ranks_the_script_spawns_run_under_the_stage_and_bisect_to_the_relu_lowering(project):
    data = bisected(project, "ddp_spawn_relu.py")
    check_relu_lowering(data)
    assert data["kind"] == "exception" and data["signature"]["message"].startswith("CppCompileError"), data
    repro = subprocess.run([sys.executable, data["repro"]], capture_output=True, text=True, timeout=600)
    assert repro.returncode != 0 and "CppCompileError" in repro.stderr


@pytest.mark.slow
@opt_in(
    "158 s in CI at 8d7a70e): the collective in the graph and the one-process repro on the fake "
    "group are tested by "
    "test_a_torchrun_job_whose_ranks_segfault_is_asked_of_the_graph_the_original_wrote_ahead, the "
    "in-place torchrun bisect by "
    "test_a_rank_that_loads_what_another_rank_stored_is_named_shared_cache"
)
def test_a_torchrun_job_with_a_collective_in_the_graph_gets_a_one_process_repro(project):
    data = bisected(project, "--nproc-per-node", "2", "tp_torchrun_relu.py")
    check_relu_lowering(data)
    repro = pathlib.Path(data["repro"]).read_text()
    assert "init_process_group('fake'" in repro  # the all-reduce runs in one process on a fake group
    run = subprocess.run([sys.executable, data["repro"]], capture_output=True, text=True, timeout=600)
    assert run.returncode != 0, run.stdout + run.stderr


@pytest.mark.slow
def test_a_torchrun_job_whose_ranks_segfault_is_asked_of_the_graph_the_original_wrote_ahead(project):
    """Issue #30 in place: both ranks die by SIGSEGV in the compiled graph (it holds an all-reduce) and write no
    result; torchrun exits 1. Its report names the signal, so the graph rank 0 wrote ahead answers the ladder and
    the rest, and the repro runs in one process on the fake group. Before: "exited 1 without a result", the
    stages ran the job again, and the repro was cut inside the running script (2 min 38 s; now 52 s)."""
    data = bisected(project, "--nproc-per-node", "2", "crash_two_ranks.py")
    assert data["kind"] == "crash" and data["signature"]["exc_type"] == "SIGSEGV", data["signature"]
    assert data["failing_stage"] == "inductor" and data["graph"] == 0, data
    assert data["unsteady"] == (
        "the run without compile is broken another way: it failed with IndexError: index N "
        "is out of bounds for dimension N with size N in all 2 runs; that is not the failure, "
        "the bisect went on"
    )
    assert data["repro_kind"] == "graph_in_context" and data["repro_verified"] is True, data["repro_attempts"]
    assert data["repro_signature"]["exc_type"] == "SIGSEGV"
    assert "init_process_group('fake'" in pathlib.Path(data["repro"]).read_text()
    journal = [json.loads(line) for line in (pathlib.Path(data["run_dir"]) / "journal.jsonl").read_text().splitlines()]
    runs = sorted(
        e["label"]
        for e in journal
        if e["spec"]["mode"] == "script" and os.path.basename(e["spec"].get("script") or "") == "crash_two_ranks.py"
    )
    assert runs == ["baseline-no-compile", "baseline-no-compile", "original"], runs


@pytest.mark.slow
def test_env_init_without_a_launcher_says_how_to_launch_it(project):
    p = reprokit(project, "bisect", "tp_torchrun_relu.py", "-o", str(project / "artifacts"))
    assert (p.returncode, p.stderr.splitlines()[-1]) == (
        2,
        (
            "reprokit: tp_torchrun_relu.py initialises torch.distributed from the environment (env://) but no launcher "
            "started it: run reprokit bisect --nproc-per-node N tp_torchrun_relu.py"
        ),
    ), p.stderr[-2000:]


@pytest.mark.slow
def test_doctor_says_a_compiled_ddp_compiled_nothing_on_the_users_line(project):
    p = reprokit(project, "doctor", "ddp_compiled_wrapper.py", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert "compiled: DistributedDataParallel at ddp_compiled_wrapper.py:14: 0 graph(s), 0 ops" in lines
    assert (
        " 1. ddp_compiled_wrapper.py:14 nothing was compiled: torch.compile of DistributedDataParallel skips its "
        "forward, so all 4 calls ran eager (no graph reached the compiler)"
    ) in lines
    assert "                           > step = torch.compile(DDP(model))" in lines
    assert "                           fix: compile the module, then wrap it: `DDP(torch.compile(model))`" in lines
    breaks = [ln for ln in lines if "graph break" in ln]
    # Every break is placed at the user's line and marked torch's, never at contextlib's or torch's own file.
    assert breaks and all(ln.split()[1] == "ddp_compiled_wrapper.py:14" and "inside torch (" in ln for ln in breaks)


@pytest.mark.slow
@opt_in(
    "480 s in the suite at 110e4fd, CI over its 45 minutes): torchrun jobs bisected in CI: the "
    "segfaulting ranks, the collective in the graph and the spawned ranks above"
)
def test_a_rank_that_loads_what_another_rank_stored_is_named_shared_cache(project, tmp_path):
    """Two ranks share one inductor cache: rank 1 loads the graph rank 0 stored and fails; with the caches off, or
    a cache per rank, the job passes (issue #32's warm-cache rung, pytorch/pytorch#188332's class)."""
    data = bisected(project, "--nproc-per-node", "2", "warm_cache_across_ranks.py")
    assert data["failing_stage"] == "inductor" and data["signature"]["exc_type"] == "AttributeError", data
    assert data["warm_cache"]["shared_by_ranks"] is True and data["warm_cache"]["when"] == "cold", data["warm_cache"]
    assert data["message"] == (
        "fails only when its ranks share one inductor cache (the FX graph cache and the AOT "
        "autograd cache): one rank loads what another stored; with a cache per rank its first "
        "run passes, and with the caches off it passes"
    )
    # The cold run failed already: no warm run of the job is spent (it could tell nothing more).
    assert [(r["stage"], r["kind"] == "pass") for r in data["ladder"]] == [
        ("cold cache, FX graph + AOT autograd", False),
        ("cold cache, one per rank", True),
    ], data["ladder"]
    assert data["warm_cache"]["warm"] is None
    assert data["repro_kind"] == "warm_cache" and data["repro_verified"] is True, data["repro_attempts"]
    run = subprocess.run(
        [sys.executable, data["repro"]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert run.returncode == 1 and "'demo_ranks' object has no attribute 'keep'" in run.stderr, run.stderr[-2000:]
    assert run.stderr.rstrip().endswith("the cold run failed (exit 1); its traceback is above"), run.stderr[-2000:]
