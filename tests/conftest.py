"""Shared fixtures of the end-to-end tests."""

import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest


@pytest.fixture(autouse=True)
def _cores_shared_unless_timing(request):
    """Under pytest-xdist, a test marked `timing` runs alone: it holds the workers' lock exclusively, every other
    test holds it shared. A wall-time assertion (a speed-up, a hang cut at 8 s, no silence over 2 s) made while
    another worker's bisect takes the cores would measure the neighbour."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:  # one process: nothing runs beside the test
        yield
        return
    exclusive = request.node.get_closest_marker("timing") is not None
    base = os.path.join(tempfile.gettempdir(), f"reprokit-tests-{run_id}")
    with open(base + ".turnstile", "a") as turnstile, open(base + ".lock", "a") as lock:
        # Every test passes the turnstile first, and a `timing` test holds it while it waits: no test starts
        # beside a waiting one. flock alone lets shared holders starve it (CI at 1dbe7f9, three workers: 270 s).
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        yield


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the cores. Two workers left 2 cores idle 14% of CI's run (cb43c87,
    /proc/stat): tests that wait on a hang's limit, a SLURM job or a fresh interpreter's imports."""
    return (os.cpu_count() or 1) + 1


def tree_digest(folder: pathlib.Path) -> dict:
    """path -> sha256 of every file under folder, reprokit's artifacts and Python's caches left out."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "artifacts" not in p.parts and "__pycache__" not in p.parts
    }


@pytest.fixture
def workdir(request, tmp_path):
    """A copy of the test module's CASES folder (the user's project); the test checks reprokit never changes it."""
    work = tmp_path / "project"
    shutil.copytree(request.module.CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    before = tree_digest(work)
    yield work
    assert tree_digest(work) == before, "reprokit modified the user's files"


def pytest_collection_modifyitems(config, items):
    """The `timing` tests, then the longest (genuine bugs, then other end-to-end runs), so that under pytest-xdist the
    run does not end with one worker finishing a 7-minute bisect while the other cores sit idle."""

    # The `timing` tests first: each holds the workers' lock alone, and asked for mid-run it waits (its worker idle)
    # until no other test holds the lock shared; CI at 0954adb lost 316 s and 128 s so in two setups.
    def weight(item):
        if item.get_closest_marker("timing"):
            return -1
        return 0 if item.get_closest_marker("real_bug") else 1 if item.get_closest_marker("slow") else 2

    items.sort(key=weight)  # stable: file order within each weight


@pytest.fixture(scope="session")
def slurm_cluster():
    """A SLURM cluster on this machine (scripts/slurm-up: installs, configures, starts; idempotent). Skips
    only where it cannot be had (no apt, not root); with REPROKIT_REQUIRE_SLURM=1 (CI) that fails instead."""
    script = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "slurm-up"
    required = os.environ.get("REPROKIT_REQUIRE_SLURM") == "1"
    reason = None
    if os.geteuid() != 0 and not shutil.which("sbatch"):
        reason = "a SLURM cluster needs root to install and start (scripts/slurm-up)"
    elif not shutil.which("sbatch") and not shutil.which("apt-get"):
        reason = "no SLURM here and no apt-get to install slurm-wlm"
    else:
        # xdist's workers share one cluster: one of them at a time brings it up.
        with open(os.path.join(tempfile.gettempdir(), "reprokit-slurm-up.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            p = subprocess.run([str(script)], capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            reason = f"scripts/slurm-up failed: {(p.stderr or p.stdout).strip()[-400:]}"
    if reason:
        if required:
            pytest.fail(f"REPROKIT_REQUIRE_SLURM=1 but {reason}")
        pytest.skip(reason)
    return subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
