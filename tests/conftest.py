"""Shared fixtures of the end-to-end tests."""
import fcntl
import hashlib
import os
import pathlib
import shutil
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
    with open(os.path.join(tempfile.gettempdir(), f"reprokit-tests-{run_id}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def tree_digest(folder: pathlib.Path) -> dict:
    """path -> sha256 of every file under folder, reprokit's artifacts and Python's caches left out."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and "artifacts" not in p.parts
            and "__pycache__" not in p.parts}


@pytest.fixture
def workdir(request, tmp_path):
    """A copy of the test module's CASES folder (the user's project); the test checks reprokit never changes it."""
    work = tmp_path / "project"
    shutil.copytree(request.module.CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    before = tree_digest(work)
    yield work
    assert tree_digest(work) == before, "reprokit modified the user's files"


def pytest_collection_modifyitems(config, items):
    """The longest tests first (genuine bugs, then other end-to-end runs), so that under pytest-xdist the run does
    not end with one worker finishing a 7-minute bisect while the other cores sit idle."""
    def weight(item):
        return 0 if item.get_closest_marker("real_bug") else 1 if item.get_closest_marker("slow") else 2
    items.sort(key=weight)  # stable: file order within each weight
