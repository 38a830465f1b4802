"""GPU: planted Triton failures isolated and minified on CUDA (run on the device machine; skipped in CI)."""
import json
import re
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

CASES = pathlib.Path(__file__).parent / "gpu_cases"
SHARED = pathlib.Path(__file__).parent / "cases" / "_blocks.py"  # the model the CPU cases use too
REPO = pathlib.Path(__file__).parent.parent


def bisect(tmp_path, case, *args):
    work = tmp_path / "project"
    shutil.copytree(CASES, work)
    shutil.copy(SHARED, work / "_blocks.py")
    p = subprocess.run([sys.executable, "-m", "reprokit", "bisect", case, "--json", "-o", str(work / "artifacts"),
                        *args], cwd=work, capture_output=True, text=True, timeout=1200,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


@pytest.mark.parametrize("bug,kind", [("compile_error", "exception"), ("runtime_error", "cuda_fault"),
                                      ("accuracy", "exception")])
def test_triton_relu_bug_isolated_and_minified(tmp_path, bug, kind):
    data = bisect(tmp_path, "triton_relu.py", "--no-configs", "--no-pack", "--", bug)
    assert data["failing_stage"] == "inductor"
    assert data["kind"] == kind, data["signature"]
    assert data["subsystem"] and data["subsystem"]["name"] == "lowerings" and "relu" in data["subsystem"]["detail"]
    assert data["repro_verified"] is True, data["message"]
    assert data["nodes"]["minified"] <= 4
    if kind == "cuda_fault":
        assert data["signature"]["message"] == "device-side assert triggered"
        kernel = data["cuda_fault"]["kernel"] or ""
        assert re.match(r"triton_(poi|per|red)_fused_\w*relu", kernel), data["cuda_fault"]


def test_reduce_overhead_mode_is_kept_and_searched(tmp_path):
    data = bisect(tmp_path, "cudagraphs_reduce_overhead.py", "--no-pack", "--no-minify")
    assert data["failing_stage"] == "inductor"
    assert data["compile_args"]["mode"] == "reduce-overhead"


def test_env_reports_the_gpu(tmp_path):
    p = subprocess.run([sys.executable, "-m", "reprokit", "env", "--json"], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    data = json.loads(p.stdout)
    assert data["cuda_available"] is True and data["gpus"][0]["name"]
    assert data["nvidia_smi"]["gpus"][0]["driver_version"]
    assert data["cuda_build"]
