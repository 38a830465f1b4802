"""Arms the recorder from the start-up hook without importing torch: a process that never imports torch (the
launcher's helpers, pip, git) pays nothing; one that does gets the recorder as soon as `import torch` ends."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys

from reprokit import settings

DEFAULT_MAX_INPUT_BYTES = 64 << 20  # as bisect's --max-input-bytes


def arm() -> None:
    """Install the recorder after torch is imported (at once if it already is)."""
    if "torch" in sys.modules:
        _install()
    else:
        sys.meta_path.insert(0, _AfterTorch())


def _install() -> None:
    from reprokit.capture.recorder import Recorder, install

    root = os.path.abspath(settings.CAPTURE.required())
    limit = settings.CAPTURE_MAX_INPUT_BYTES.get() or ""
    rec = Recorder(root, int(limit) if limit.isdigit() else DEFAULT_MAX_INPUT_BYTES)
    try:
        rec.compile_timeout = float(settings.CAPTURE_COMPILE_TIMEOUT.get() or "") or None
    except ValueError:
        pass
    rec.fall_back = settings.CAPTURE_FALL_BACK.get() == "1"
    calls = settings.CAPTURE_CHECK_CALLS.get() or ""
    if calls.isdigit() and int(calls) > 0:
        from reprokit.capture.check import CheckState

        rec.check = CheckState(int(calls))
    graph_limit = settings.CAPTURE_MAX_GRAPH_INPUT_BYTES.get() or ""
    rec.max_graph_bytes = int(graph_limit) if graph_limit.isdigit() else None
    rec.inputs_on_disk = settings.CAPTURE_INPUTS_ON_DISK.get() == "1"
    install(rec)


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds torch as the rest of sys.meta_path would, and installs the recorder once its module has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # once: the recorder's own imports must not come back here
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            try:
                _install()
            except Exception as e:  # never the job's failure
                print(f"reprokit capture: not recording: {type(e).__name__}: {e}", file=sys.stderr)

        loader.exec_module = exec_module  # type: ignore[method-assign]  # the module's loader, wrapped
        return spec
