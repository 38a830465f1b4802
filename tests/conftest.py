"""Shared fixtures of the end-to-end tests."""
import hashlib
import pathlib
import shutil

import pytest


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
