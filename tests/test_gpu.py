"""GPU: planted Triton failures isolated and minified on CUDA (run on the device machine; skipped in CI)."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

CASES = pathlib.Path(__file__).parent / "gpu_cases"
SHARED = pathlib.Path(__file__).parent / "cases" / "_blocks.py"  # the model the CPU cases use too
REPO = pathlib.Path(__file__).parent.parent


def bisect(tmp_path, case, *args, code=0):
    work = tmp_path / "project"
    shutil.copytree(CASES, work)
    shutil.copy(SHARED, work / "_blocks.py")
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "bisect", case, "--json", "-o", str(work / "artifacts"), *args],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert p.returncode == code, p.stderr[-3000:]
    return json.loads(p.stdout) if code == 0 else p


def bisect_capture(tmp_path, capture, env, summary: str) -> dict:
    """`reprokit bisect --from-capture CAPTURE --json`, its verdict kept for gpu-check's summary as `summary`."""
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "bisect",
            "--from-capture",
            str(capture),
            "--json",
            "-o",
            str(tmp_path / "art"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    data = json.loads(p.stdout)
    if os.environ.get("REPROKIT_GPU_SUMMARY"):
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], summary), "w") as f:
            json.dump(data, f)
    return data


def journal(data):
    with open(os.path.join(data["run_dir"], "journal.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.mark.parametrize(
    "bug,kind", [("compile_error", "exception"), ("runtime_error", "cuda_fault"), ("accuracy", "exception")]
)
def test_triton_relu_bug_isolated_and_minified(tmp_path, bug, kind):
    data = bisect(tmp_path, "triton_relu.py", "--no-configs", "--no-pack", "--", bug)
    if os.environ.get("REPROKIT_GPU_SUMMARY"):  # scripts/gpu-check prints a line per case from these
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], f"{bug}.json"), "w") as f:
            json.dump(data, f)
    assert data["failing_stage"] == "inductor"
    assert data["kind"] == kind, data["signature"]
    assert data["subsystem"] and data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"]
    assert data["repro_verified"] is True, data["message"]
    assert data["nodes"]["minified"] <= 4
    if kind == "cuda_fault":
        assert data["signature"]["message"] == "device-side assert triggered"
        kernel = data["cuda_fault"]["kernel"] or ""
        assert re.match(r"triton_(poi|per|red)_fused_\w*relu", kernel), data["cuda_fault"]
        # The fault poisoned that process's context; the device itself was probed afterwards and works.
        assert data["cuda_fault"]["device_check"].startswith("healthy"), data["cuda_fault"]
    # On a GPU the bug is also tried under the other torch.compile modes.
    assert {r["mode"] for r in data["modes"]} >= {"reduce-overhead", "max-autotune"}, data["modes"]
    gpus = torch.cuda.device_count()
    if gpus > 1:
        # One trial per GPU at a time: the trials were spread over the devices.
        used = {e["outcome"].get("device") for e in journal(data)}
        assert used == {str(i) for i in range(gpus)}, used


def test_aoti_device_assert_is_found_at_its_lowering_and_minified(tmp_path):
    """The Triton relu of an AOTInductor build for CUDA planted with a device-side assert: it fires while
    aoti_compile_and_package runs the kernels once, and the script sees it at the next synchronisation, in no kernel.
    Stage aoti_compile, kind cuda_fault from a CUDA_LAUNCH_BLOCKING=1 re-run, the relu lowering, and a repro.py that
    exports and AOT-compiles the relu alone for CUDA again and fails so in a fresh interpreter."""
    data = bisect(tmp_path, "aoti_relu_assert.py", "--no-configs", "--no-pack")
    if os.environ.get("REPROKIT_GPU_SUMMARY"):
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], "aoti_relu_assert.json"), "w") as f:
            json.dump(data, f)
    assert (data["failing_stage"], data["last_passing_stage"]) == ("aoti_compile", "decompose"), data["ladder"]
    assert data["kind"] == "cuda_fault" and data["signature"]["message"] == "device-side assert triggered"
    fault = data["cuda_fault"]
    assert fault["launch_blocking"] is True and "launch-blocking" in fault["trial"], fault
    assert fault["device_check"].startswith("healthy"), fault
    # the fault surfaces in no kernel; the kernel whose source holds the message its assert printed is named
    assert fault["kernel"].startswith("triton_poi_fused_") and "relu" in fault["kernel"], fault
    assert data["message"] == (
        "AOTInductor runs each CUDA kernel it generates once while compiling (its autotuning, "
        f"on random inputs of the example's shapes), and one of them, {fault['kernel']}, "
        'raised "device-side assert triggered" there, the same with CUDA_LAUNCH_BLOCKING=1'
    ), data["message"]
    assert data["subsystem"] and data["subsystem"]["confirmed"] is True, data["subsystem"]
    assert data["subsystem"]["detail"].startswith("aten.relu.default"), data["subsystem"]
    assert data["repro_verified"] is True and data["repro_kind"] == "export_graph", data["repro_attempts"]
    assert data["nodes"]["minified"] == 1, data["nodes"]
    text = pathlib.Path(data["repro"]).read_text()
    assert "relu = torch.ops.aten.relu.default(" in text and "device='cuda'" in text
    assert "torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = 'runtime_error'" in text


def test_reduce_overhead_mode_is_kept_and_searched(tmp_path):
    data = bisect(tmp_path, "cudagraphs_reduce_overhead.py", "--no-pack", "--no-minify")
    assert data["failing_stage"] == "inductor"
    assert data["compile_args"]["mode"] == "reduce-overhead"


def test_an_output_read_after_the_next_replay_overwrote_it_gets_the_script_cut_down_as_its_repro(tmp_path):
    """The failure lives in how the script calls the compiled function (two calls, the first output kept across
    the second's replay): no graph fails alone, so the repro is the script reduced at source level."""
    data = bisect(tmp_path, "cudagraphs_overwritten_output.py", "--no-configs", "--no-pack")
    if os.environ.get("REPROKIT_GPU_SUMMARY"):
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], "cudagraphs_overwritten.json"), "w") as f:
            json.dump(data, f)
    assert data["failing_stage"] == "inductor" and "overwritten by a subsequent" in data["signature"]["message"]
    assert data["subsystem"] and data["subsystem"]["name"] == "cudagraphs", data["subsystem"]
    assert (data["repro_kind"], data["repro_verified"]) == ("source", True), (data["message"], data["repro_attempts"])
    run = subprocess.run(
        [sys.executable, data["repro"]],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "project")},
    )  # _blocks.py
    assert "overwritten by a subsequent" in run.stderr, run.stderr[-2000:]


def test_env_reports_the_gpu(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", "env", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    )
    data = json.loads(p.stdout)
    assert data["cuda_available"] is True and data["gpus"][0]["name"]
    assert data["nvidia_smi"]["gpus"][0]["driver_version"]
    assert data["cuda_build"]


def test_illegal_memory_access_is_its_own_kind_and_the_device_is_checked(tmp_path):
    """A Triton store far out of bounds: kind cuda_fault named by the fault, and the GPU probed healthy after."""
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.runner import Runner

    work = tmp_path / "project"
    shutil.copytree(CASES, work)
    run = RunDir.create(str(tmp_path / "artifacts"), "ima")
    runner = Runner(run, timeout=600, devices=["0"])
    out = runner(
        TrialSpec(
            mode="script", stage="user", script=str(work / "illegal_memory_access.py"), cwd=str(work), label="ima"
        )
    )
    assert out.kind == "cuda_fault", (out.kind, out.signature, out.traceback[-2000:])
    assert out.signature.message == "an illegal memory access was encountered"
    assert out.device == "0" and out.device_check.startswith("healthy"), out.device_check


def test_an_illegal_memory_access_in_the_scripts_own_kernel_is_named_by_compute_sanitizer(tmp_path):
    """CUDA_LAUNCH_BLOCKING=1 alone names no kernel for a fault in a kernel the script wrote (no inductor name);
    where compute-sanitizer is installed, one more run under its memcheck does, and ISSUE.md says so."""
    from reprokit.trial.sanitizer import sanitizer_path

    if not sanitizer_path():
        pytest.skip("compute-sanitizer is not installed here")
    data = bisect(tmp_path, "ima_compiled_only.py", "--no-minify")
    if os.environ.get("REPROKIT_GPU_SUMMARY"):
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], "ima_compiled_only.json"), "w") as f:
            json.dump(data, f)
    assert data["kind"] == "cuda_fault" and data["signature"]["message"] == "an illegal memory access was encountered"
    assert (data["failing_stage"], data["last_passing_stage"]) == ("eager", "none"), data["ladder"]
    fault = data["cuda_fault"]
    assert fault["launch_blocking"] is True and fault["named_by"] == "sanitizer", fault
    assert fault["kernel"] == "scatter_far" and fault["sanitizer"]["error"].startswith("Invalid __global__ write"), (
        fault
    )
    issue = subprocess.run(
        [sys.executable, "-m", "reprokit", "issue", data["run_dir"]],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=300,
    ).stdout
    assert (
        "in kernel `scatter_far`" in issue and "compute-sanitizer's memcheck named (Invalid __global__ write" in issue
    )


def test_cuda_out_of_memory_is_a_skip_not_a_bug(tmp_path):
    p = bisect(tmp_path, "cuda_out_of_memory.py", "--no-pack", code=3)
    assert "ran out of memory" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs (NCCL across them)")
def test_a_two_gpu_torchrun_job_bisects_to_the_relu_lowering_with_a_one_process_repro(tmp_path):
    """Every trial is a 2-rank torchrun job over NCCL, each rank on its own GPU; the repro runs in one process."""
    data = bisect(tmp_path, "tp_nccl_relu.py", "--nproc-per-node", "2", "--no-configs", "--no-pack")
    if os.environ.get("REPROKIT_GPU_SUMMARY"):
        with open(os.path.join(os.environ["REPROKIT_GPU_SUMMARY"], "tp_nccl_2gpu.json"), "w") as f:
            json.dump(data, f)
    assert data["failing_stage"] == "inductor"
    assert data["subsystem"] and data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"]
    assert data["repro_verified"] is True, data["message"]
    run = subprocess.run([sys.executable, data["repro"]], capture_output=True, text=True, timeout=600)
    assert run.returncode != 0, run.stdout[-2000:]  # one process, a fake process group: the mismatch again


def test_a_capture_on_one_gpu_is_bisected_from_the_capture_on_the_same_gpu(tmp_path):
    """Issue #30: `reprokit capture` of the planted Triton compile error, then `bisect --from-capture` on the same
    GPU: the stage and the relu lowering, a verified repro, and no run of the job."""
    work = tmp_path / "project"
    shutil.copytree(CASES, work)
    shutil.copy(SHARED, work / "_blocks.py")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    capture = tmp_path / "cap"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "capture",
            "--output-dir",
            str(capture),
            "--",
            sys.executable,
            "triton_relu.py",
            "compile_error",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert p.returncode == 1 and f"reprokit bisect --from-capture {capture}" in p.stderr, p.stderr[-3000:]
    failure = json.loads((capture / "rank0" / "failure.json").read_text())
    assert failure["graph"] == 0, failure
    data = bisect_capture(tmp_path, capture, env, "from_capture.json")
    assert data["failing_stage"] == "inductor" and data["kind"] == "exception", data["signature"]
    assert data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"], data["subsystem"]
    assert data["repro_verified"] is True and data["nodes"]["minified"] <= 4, data["message"]
    assert "cuda" in pathlib.Path(data["repro"]).read_text()
    ran = [e for e in journal(data) if e["kind"] == "script" and not e["spec"]["script"].endswith("repro.py")]
    assert ran == [], [e["label"] for e in ran]  # zero runs of the job


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs (NCCL across them)")
def test_a_two_gpu_nccl_job_captured_is_bisected_on_one_gpu(tmp_path):
    """Issue #31: the two-rank NCCL job captured once under torchrun, then bisected from the capture with one GPU
    visible: the stage, the relu lowering, a verified repro on the fake process group, and no run of the job."""
    work = tmp_path / "project"
    shutil.copytree(CASES, work)
    env = {**os.environ, "PYTHONPATH": str(REPO), "RELU_BUG": "compile_error"}
    capture = tmp_path / "cap"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "reprokit",
            "capture",
            "--output-dir",
            str(capture),
            "--",
            "torchrun",
            "--standalone",
            "--nproc-per-node",
            "2",
            "tp_nccl_relu.py",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert p.returncode != 0 and f"reprokit bisect --from-capture {capture}" in p.stderr, p.stderr[-3000:]
    for rank in ("0", "1"):
        failure = json.loads((capture / f"rank{rank}" / "failure.json").read_text())
        assert failure["process_group"] == {"rank": int(rank), "world_size": 2, "backend": "nccl"}, failure
    assert "all_reduce" in (capture / "rank0" / "case" / "graph.py").read_text()
    one = {**env, "CUDA_VISIBLE_DEVICES": env.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]}
    data = bisect_capture(tmp_path, capture, one, "nccl_capture.json")
    assert data["failing_stage"] == "inductor", data["message"]
    assert data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"], data["subsystem"]
    assert data["repro_verified"] is True, data["message"]
    repro = pathlib.Path(data["repro"]).read_text()
    assert "init_process_group('fake'" in repro and "cuda" in repro
    ran = [e for e in journal(data) if e["kind"] == "script" and not e["spec"]["script"].endswith("repro.py")]
    assert ran == [], [e["label"] for e in ran]  # zero runs of the job
