"""What pip installs: the wheel and sdist built from this tree hold the whole package (every module, the templates,
the start-up hook), carry the metadata an index shows, and `reprokit --version` says the installed version.

A wheel built from a hand-kept package list once left out reprokit.capture and child/starthook, and the editable
install the suite runs from could not see it (issue #44)."""

import email
import importlib.metadata
import pathlib
import subprocess
import sys
import tarfile
import tomllib
import zipfile

import pytest

import reprokit
from reprokit.trial.environment import _package_alone as package_alone
from reprokit.trial.environment import import_root

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]


def tree_files() -> set[str]:
    """The files an install must hold, as paths inside site-packages: every module of reprokit/ (the start-up
    hook's folder has no __init__.py) and templates/ as reprokit/templates/."""
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "reprokit").rglob("*.py")}
    templates = {f"reprokit/templates/{p.name}" for p in (ROOT / "templates").iterdir() if p.suffix in (".py", ".j2")}
    return {m for m in modules if "__pycache__" not in m} | templates


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The sdist, then the wheel built from it, as `python -m build` makes them for an upload."""
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return {"wheel": next(out.glob("*.whl")), "sdist": next(out.glob("*.tar.gz"))}


def test_the_wheel_holds_every_module_the_templates_and_the_start_up_hook(built):
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    installed = {n for n in names if not n.startswith(f"reprokit-{VERSION}.dist-info/")}
    assert installed == tree_files()
    assert {"reprokit/capture/__init__.py", "reprokit/child/starthook/sitecustomize.py"} <= installed
    assert f"reprokit-{VERSION}.dist-info/licenses/LICENSE" in names


def test_the_sdist_holds_the_tree_that_builds_the_wheel(built):
    prefix = f"reprokit-{VERSION}/"
    with tarfile.open(built["sdist"]) as tar:
        names = {m.name.removeprefix(prefix) for m in tar.getmembers() if m.isfile()}
    sources = {n for n in names if n.startswith(("reprokit/", "templates/"))}
    expected = {n.replace("reprokit/templates/", "templates/", 1) for n in tree_files()}
    assert sources == expected
    assert {"pyproject.toml", "setup.py", "LICENSE", "README.md", "PKG-INFO"} <= names
    assert not any(n.startswith("tests/") for n in names)  # the suite runs from a checkout, with its cases


def test_the_metadata_an_index_shows(built):
    with zipfile.ZipFile(built["wheel"]) as wheel:
        meta = email.message_from_bytes(wheel.read(f"reprokit-{VERSION}.dist-info/METADATA"))
    assert meta["Version"] == VERSION
    assert meta["License-Expression"] == "BSD-3-Clause"
    assert meta["Requires-Python"] == ">=3.11"
    pythons = [c for c in meta.get_all("Classifier") if c.startswith("Programming Language :: Python :: 3.")]
    assert pythons == ["Programming Language :: Python :: 3.11"]  # what CI runs, no more
    assert meta.get_all("Project-URL") == [
        "Upstream tracker (where reports go), https://github.com/pytorch/pytorch/issues"
    ]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built["wheel"]), str(built["sdist"])],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_version_prints_the_installed_version():
    run = subprocess.run([sys.executable, "-m", "reprokit", "--version"], capture_output=True, text=True, cwd="/")
    assert (run.returncode, run.stdout, run.stderr) == (0, f"reprokit, version {VERSION}\n", "")
    # what the repro.py header and ISSUE.md say: the installed distribution's, which is pyproject.toml's
    assert reprokit.__version__ == importlib.metadata.version("reprokit") == VERSION


def test_an_installed_reprokit_reaches_another_interpreter_alone(tmp_path):
    """Installed, reprokit's parent is site-packages: a trial under another release's interpreter (reprokit versions)
    gets a folder holding reprokit alone on its PYTHONPATH, never this environment's torch; a checkout is its own."""
    site = tmp_path / "site-packages"
    for name in ("reprokit", "torch"):
        (site / name).mkdir(parents=True)
    root = pathlib.Path(package_alone(str(site / "reprokit"), str(tmp_path / "cache")))
    assert [p.name for p in root.iterdir()] == ["reprokit"]
    assert (root / "reprokit").resolve() == site / "reprokit"
    assert import_root("/opt/torch-2.15/bin/python") == import_root() == str(ROOT)
