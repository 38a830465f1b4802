"""The script run as its user runs it (trial/plain.py): nothing of reprokit's in the process, and how it ended as an
Outcome. Small scripts without torch: each run is a fresh interpreter of its own."""

import json
import os

from reprokit.child.ranks import HOOK_DIR
from reprokit.trial.plain import run_plain

SHOWS_ITS_WORLD = """
import json, os, sys
print(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "reprokit": sorted(k for k in os.environ
    if k.startswith("REPROKIT_")), "user": os.environ.get("USER_SETTING"), "modules": sorted(m for m in sys.modules
    if m.startswith("reprokit")), "path": os.environ.get("PYTHONPATH")}))
"""


def test_the_plain_run_has_the_users_argv_cwd_and_environment_and_nothing_of_reprokit(tmp_path, monkeypatch):
    (tmp_path / "world.py").write_text(SHOWS_ITS_WORLD)
    monkeypatch.setenv("REPROKIT_WARM", "0")
    monkeypatch.setenv("REPROKIT_CAPTURE", str(tmp_path / "capture"))
    monkeypatch.setenv("USER_SETTING", "kept")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([HOOK_DIR, str(tmp_path / "lib")]))
    out = run_plain(str(tmp_path / "world.py"), ("--lr", "3e-4"), str(tmp_path), str(tmp_path / "run"), 60)
    assert (out.kind, out.returncode, out.signature.short()) == ("pass", 0, "passes")
    seen = json.loads((tmp_path / "run" / "stdout.txt").read_text())
    assert seen == {
        "argv": ["--lr", "3e-4"],
        "cwd": str(tmp_path),
        "reprokit": [],
        "user": "kept",
        "modules": [],
        "path": str(tmp_path / "lib"),
    }


def test_the_plain_run_names_the_exception_a_crash_an_exit_and_a_hang(tmp_path):
    scripts = {
        "raises": "def f():\n    assert 2 == 3, 'tensor([2., 2.])'\nf()\n",
        "killed": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
        "exits": "import sys\nsys.exit(4)\n",
        "hangs": "import time\ntime.sleep(60)\n",
    }
    seen = {}
    for name, text in scripts.items():
        (tmp_path / f"{name}.py").write_text(text)
        out = run_plain(str(tmp_path / f"{name}.py"), (), str(tmp_path), str(tmp_path / name), 3)
        seen[name] = (out.kind, out.signature.short())
    assert seen == {
        "raises": ("exception", "AssertionError: tensor([N., N.])"),
        "killed": ("crash", "SIGSEGV: killed by SIGSEGV"),
        "exits": ("exit", "exit: exit code 4"),
        "hangs": ("hang", "hang: timed out"),
    }
    assert "assert 2 == 3" in run_plain(str(tmp_path / "raises.py"), (), "", str(tmp_path / "again"), 30).traceback


def test_a_job_of_several_ranks_runs_as_written_under_torchrun(tmp_path):
    (tmp_path / "ranks.py").write_text("import os\nprint('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])\n")
    torchrun = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2")
    out = run_plain(str(tmp_path / "ranks.py"), (), str(tmp_path), str(tmp_path / "run"), 120, launcher=torchrun)
    assert out.kind == "pass", (tmp_path / "run" / "stderr.txt").read_text()[-2000:]
    assert sorted((tmp_path / "run" / "stdout.txt").read_text().splitlines()) == ["rank 0 of 2", "rank 1 of 2"]
