"""Where trials keep inductor's compiled kernels: one folder per machine and torch install, shared by runs.

Sharing it cannot hide a codegen bug: inductor names each kernel binary by a hash of its full generated source and
its compile command, and the code generation itself runs in every trial (the compiled-graph and autograd caches,
which would skip it, are off in every trial: trial_env). A buggy lowering writes different source and so
misses the cache; a C++ compile error writes no binary, so it is compiled, and fails, again each time. What is
shared is the work that does not depend on the bug: the C++ compiler run for source seen before, and the one-off
checks of which vector ISAs the CPU runs, and on a GPU Triton's binaries (also keyed by source) and autotuning
choices (a remembered choice still runs the chosen kernel). torch's headers are not part of that hash, so each torch install gets a
folder of its own.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os

from reprokit import settings

# REPROKIT_CACHE_DIR=run keeps the old behaviour: a cold cache inside each run folder (the benchmark's cold row).
CACHE_ENV = settings.CACHE_DIR.name


def compile_cache_root(run_cache: str) -> str:
    """The cache folder trials use; `run_cache` (inside the run folder) when REPROKIT_CACHE_DIR=run."""
    base = cache_base()
    if base == "run":
        return run_cache
    return os.path.join(base, "compile", _torch_install_key())


def cache_base() -> str:
    """reprokit's per-machine cache folder: REPROKIT_CACHE_DIR, else ~/.cache/reprokit (XDG_CACHE_HOME honoured)."""
    return settings.CACHE_DIR.get() or os.path.join(
        settings.XDG_CACHE_HOME.get() or os.path.join(os.path.expanduser("~"), ".cache"), "reprokit"
    )


@functools.cache
def torch_has_bytecode() -> bool:
    """Whether the torch install has its compiled .pyc files beside its sources (pip writes them; uv does not)."""
    spec = importlib.util.find_spec("torch")
    if not (spec and spec.origin):
        return True
    return os.path.isdir(os.path.join(os.path.dirname(spec.origin), "__pycache__"))


def _torch_install_key() -> str:
    """torch's version and a hash of where it is installed, read without importing torch."""
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        version = "none"
    spec = importlib.util.find_spec("torch")
    where = os.path.dirname(spec.origin) if spec and spec.origin else ""
    return f"torch-{version}-{hashlib.sha256(where.encode()).hexdigest()[:10]}"
