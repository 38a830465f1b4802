"""A kernel binary a killed trial left half-written in the shared compile cache is not the script's failure."""

import os
import textwrap

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial.runner import Runner

SCRIPT = """
import torch

f = torch.compile(lambda x: torch.relu(x) * 3 + 1)
torch.testing.assert_close(f(torch.arange(-4.0, 4.0)), torch.relu(torch.arange(-4.0, 4.0)) * 3 + 1)
"""


def inductor_run(tmp_path, name):
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), name), timeout=300)
    try:
        return runner(
            TrialSpec(
                mode="script", stage="inductor", script=str(tmp_path / "job.py"), cwd=str(tmp_path), label="inductor"
            )
        )
    finally:
        runner.close()


def cut_short(paths, age=0):
    """What SIGKILL during the link leaves behind, `age` seconds ago."""
    for so in paths:
        so.write_bytes(so.read_bytes()[:100])
        os.utime(so, (so.stat().st_atime - age, so.stat().st_mtime - age))


def test_half_written_kernel_binaries_are_swept_or_the_trial_run_again(tmp_path, monkeypatch):
    monkeypatch.setenv("REPROKIT_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "job.py").write_text(textwrap.dedent(SCRIPT))
    assert inductor_run(tmp_path, "first").kind == "pass"
    binaries = list((tmp_path / "cache").rglob("*.so"))
    kernels = [so for so in binaries if so.name.endswith(".main.so")]
    assert kernels and len(binaries) > len(kernels)  # the kernel, and inductor's vector-ISA probes

    # Left by a run killed long ago (the ISA probes too, which would fail silently): swept at the start.
    cut_short(binaries, age=3600)
    assert inductor_run(tmp_path, "second").kind == "pass"
    assert all(so.stat().st_size > 100 for so in binaries)

    # Left a moment ago by a trial of this run: the trial that cannot load it runs once more without it.
    cut_short(kernels)
    again = inductor_run(tmp_path, "third")
    assert again.kind == "pass", again
    assert again.note.endswith(
        f"run again: a killed trial had left {kernels[0].name} half-written in the compile cache"
    ), again.note
    assert all(so.stat().st_size > 100 for so in kernels)


PACKAGE_SCRIPT = """
import os, sys
import torch

# The package a trial beside this one is still writing (package_aoti writes the archive in place).
torch._inductor.aoti_load_package(sys.argv[1])
"""


def test_a_package_another_trial_is_writing_is_loaded_again_a_bounded_number_of_times(tmp_path):
    """Two trials side by side write and load the same AOTInductor package (its path is the graph's hash in the
    shared cache): the one that opened it mid-write runs again; an archive that stays unreadable is, after the
    bounded re-runs, the trial's outcome."""
    (tmp_path / "job.py").write_text(textwrap.dedent(PACKAGE_SCRIPT))
    archive = tmp_path / "half.pt2"
    archive.write_bytes(b"PK\x03\x04" + bytes(60))  # a zip's first entry header, nothing after it yet
    runner = Runner(RunDir.create(str(tmp_path / "artifacts"), "package"), timeout=300)
    try:
        o = runner(
            TrialSpec(
                mode="script",
                stage="none",
                script=str(tmp_path / "job.py"),
                argv=(str(archive),),
                cwd=str(tmp_path),
                label="load",
            )
        )
    finally:
        runner.close()
    assert o.kind == "exception" and "Failed to initialize zip archive" in o.signature.message, o
    assert (
        o.note.split("; ") == ["run again: the AOTInductor package it loaded was being written by another trial"] * 3
    ), o.note
