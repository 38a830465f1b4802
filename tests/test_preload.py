"""The script's own imports loaded in the warm worker (trial/preload.py): which, and only those that import cleanly
without starting a thread."""

import sys

from reprokit.trial.preload import load, script_imports


def test_the_scripts_top_level_imports_from_outside_its_folder(tmp_path):
    (tmp_path / "helpers.py").write_text("X = 1\n")
    (tmp_path / "pkg").mkdir()
    script = tmp_path / "train.py"
    script.write_text(
        "from __future__ import annotations\n"
        "import torch.nn.functional as F, numpy as np\n"
        "from collections import OrderedDict\n"
        "import helpers\n"
        "from pkg import thing\n"
        "from . import sibling\n"
        "import reprokit.search\n"
        "import torch.nn.functional\n"
        "def f():\n"
        "    import colorsys\n"
    )
    assert script_imports(str(script)) == ("torch.nn.functional", "numpy", "collections")


def test_a_script_that_does_not_parse_preloads_nothing(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("import torch\nif\n")
    assert script_imports(str(script)) == ()


def test_a_module_that_starts_a_thread_or_fails_is_not_loaded(tmp_path, monkeypatch):
    (tmp_path / "starts_a_thread.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    )
    (tmp_path / "fails_at_import.py").write_text("print('noise'); raise RuntimeError('no')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("starts_a_thread", "fails_at_import", "colorsys"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert load(("starts_a_thread", "fails_at_import", "colorsys")) == ["colorsys"]
    assert "starts_a_thread" not in sys.modules and "fails_at_import" not in sys.modules
