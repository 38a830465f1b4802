"""Whole-script trials: run the user's script as __main__, and say which of its own modules it imported."""

from __future__ import annotations

import os
import runpy
import sys

from reprokit.data.records import TrialSpec

_READ: set = set()  # files the script opened (an audit hook adds them): the pack's git diff covers these


def _note_open(event: str, args: tuple) -> None:
    if event == "open" and isinstance(args[0], str) and (args[1] is None or "r" in str(args[1])):
        _READ.add(os.path.abspath(args[0]))


def run_script(spec: TrialSpec) -> None:
    """Run the script as `python script.py argv...` would, from its folder (or the spec's cwd)."""
    sys.addaudithook(_note_open)
    sys.argv = [spec.script, *spec.argv]
    os.chdir(spec.cwd or os.path.dirname(spec.script))
    sys.path[0] = os.path.dirname(os.path.abspath(spec.script))
    sys.path[1:1] = [d for d in spec.path_dirs if d not in sys.path]
    runpy.run_path(spec.script, run_name="__main__")


def local_files_read(script: str) -> list:
    """Files under the script's folder tree that the script opened for reading (data, configs), not modules."""
    root = os.path.dirname(os.path.abspath(script))
    return sorted(
        p
        for p in list(_READ)
        if p.startswith(root + os.sep)
        and not p.endswith((".py", ".pyc"))
        and "__pycache__" not in p
        and os.path.isfile(p)
    )


def local_modules(script: str) -> list:
    """Files of modules the script imported from its own folder tree (not site-packages, not reprokit)."""
    root = os.path.dirname(os.path.abspath(script))
    out = set()
    for mod in list(sys.modules.values()):
        path = getattr(mod, "__file__", None)
        if not path:
            continue
        path = os.path.abspath(path)
        if path.startswith(root + os.sep) and "site-packages" not in path and path.endswith(".py"):
            out.add(path)
    out.discard(os.path.abspath(script))
    return sorted(out)
