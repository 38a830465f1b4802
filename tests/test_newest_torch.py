"""The smoke set for the newest torch: .ci/run runs this file in a second environment with torch 2.15 (see
README, "Tested versions"). A planted compile error, a script that uses 2.15's new torch.compile keywords,
doctor and pack, each end to end. Under an older torch every test here is skipped: the full suite covers it."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch
from issue_checks import check_compile_errors_replayed

HERE = pathlib.Path(__file__).parent
REPO = HERE.parent
NEWEST = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) >= (2, 15)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.newest_smoke,
    pytest.mark.skipif(
        not NEWEST,
        reason=f"smoke set for torch >= 2.15 (this is {torch.__version__}): .ci/run runs it in its second environment",
    ),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    work = tmp_path_factory.mktemp("newest") / "project"
    shutil.copytree(HERE / "cases", work, ignore=shutil.ignore_patterns("__pycache__"))
    for extra in (HERE / "newest_cases").iterdir():
        shutil.copy(extra, work)
    shutil.copy(HERE / "doctor_cases" / "breaks.py", work / "doctor_breaks.py")
    return work


def reprokit(cwd, *args, timeout=1500):
    return subprocess.run(
        [sys.executable, "-m", "reprokit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def bisect(project, case, *args):
    p = reprokit(project, "bisect", case, "--json", "-o", str(project / "artifacts"), *args)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def test_planted_compile_error_is_bisected_minified_and_packed(project):
    v = bisect(project, "relu_compile_error.py", "--no-configs", "--no-subsystems")
    assert (v["failing_stage"], v["graph"], v["repro_verified"]) == ("inductor", 0, True), v["message"]
    assert v["signature"]["exc_type"] == "InductorError" and os.path.exists(v["tarball"])
    check_compile_errors_replayed(v["run_dir"])
    p = reprokit(project, "pack", v["run_dir"])
    assert p.returncode == 0 and p.stdout.startswith("wrote ") and p.stdout.strip().endswith(".tar.gz"), p.stderr


def test_a_script_with_2_15_keywords_is_bisected(project):
    v = bisect(project, "keywords_compile_error.py", "--no-configs", "--no-subsystems", "--no-minify", "--no-pack")
    assert (v["failing_stage"], v["last_passing_stage"], v["graph"]) == ("inductor", "aot_eager_decomp_partition", 0), (
        v["message"]
    )
    assert v["signature"]["exc_type"] == "InductorError"


def test_doctor_attaches_to_torchs_records_and_names_the_breaks(project):
    p = reprokit(project, "doctor", "doctor_breaks.py", "--json", "-o", str(project / "artifacts"))
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout)
    assert r["unobserved"] == []
    assert len([f for f in r["findings"] if f["kind"] == "graph_break"]) == 3


@pytest.mark.skipif(torch.cuda.is_available(), reason="a machine without a GPU: the runner starts its worker for CPU")
def test_the_warm_worker_serves_a_cpu_machine_whatever_torchs_build():
    """Graph trials fork from a worker that imported torch once. torch 2.15's CUDA wheel marks every fork unfit for
    CUDA where there is no GPU; the worker refused to serve, and every trial imported torch afresh (the planted
    bisect above took 202 s instead of 81 s here)."""
    from reprokit.trial.fork_pool import ForkPool

    pool = ForkPool({**os.environ, "PYTHONPATH": str(REPO)}, cpu=True)
    try:
        assert pool.alive()
    finally:
        pool.close()


def test_with_bytecode_writing_off_a_trial_compiles_torch_once_into_reprokits_cache(tmp_path, monkeypatch):
    """PYTHONDONTWRITEBYTECODE=1 (container images set it) and a torch installed without .pyc files (uv, as this
    environment was made): each fresh interpreter compiled torch's modules from source, 7 s of the warm worker's
    13 s start here. A trial now writes them under reprokit's cache and reads them back next time; nothing is
    written beside the user's files."""
    from reprokit.data.records import TrialSpec
    from reprokit.trial.cache import torch_has_bytecode
    from reprokit.trial.launch import run_trial

    if torch_has_bytecode():
        pytest.skip("this torch has its .pyc files: trials use them as they are")
    (tmp_path / "helper.py").write_text("VALUE = 3\n")
    (tmp_path / "main.py").write_text("import torch\nimport helper\nassert helper.VALUE == 3\nprint('ok')\n")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    spec = TrialSpec(mode="script", stage="none", script=str(tmp_path / "main.py"), cwd=str(tmp_path))
    cache = tmp_path / "cache"
    outcome = run_trial(spec, str(tmp_path / "trial"), str(cache), timeout=600)
    assert outcome.kind == "pass", outcome
    assert list((cache / "pycache").rglob("torch/__init__.cpython-*.pyc")), "torch's bytecode is not in the cache"
    assert not (tmp_path / "__pycache__").exists()  # the user's folder is as it was
