"""A trial's environment: the user's, scrubbed of reprokit's and torch's switches, with the stage's own set."""

from __future__ import annotations

import os

from reprokit import settings
from reprokit.data.ranks import free_port
from reprokit.data.records import TrialSpec
from reprokit.data.warm_cache import CACHES, COMPILE_ERRORS
from reprokit.trial.cache import torch_has_bytecode

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Variables a trial must never inherit: they would silently change what is compiled or where caches go.
_SCRUBBED_ENV = (
    "TORCHDYNAMO_DISABLE",
    "TORCH_BISECT_BACKEND",
    "TORCH_BISECT_SUBSYSTEM",
    "TORCH_BISECT_MAX",
    "TORCH_COMPILE_BACKEND",
    "TORCHINDUCTOR_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TORCHDYNAMO_REPRO_AFTER",
    "TORCHDYNAMO_REPRO_LEVEL",
)


def trial_env(
    spec: TrialSpec, cache_root: str, trial_dir: str, base: dict | None = None, compile_errors: str | None = None
) -> dict:
    """The environment of one trial: the user's, with reprokit's caches and the stage's switches; compile_errors:
    the run's folder of C++ compile errors a trial may replay (child/compile_errors.py)."""
    env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in _SCRUBBED_ENV}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_root, "inductor")
    env["TRITON_CACHE_DIR"] = os.path.join(cache_root, "triton")
    # Compiled-graph caches could answer a trial without running the failing codegen: off.
    env.update({var: "0" for var in CACHES.values()})
    env.pop(COMPILE_ERRORS, None)
    if compile_errors:
        env[COMPILE_ERRORS] = compile_errors
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, settings.PYTHONPATH.get(env=env)) if p)
    env["PYTHONUNBUFFERED"] = "1"
    bytecode_off = settings.PYTHONDONTWRITEBYTECODE.get(env=env)
    if bytecode_off and not settings.PYTHONPYCACHEPREFIX.get(env=env) and not torch_has_bytecode():
        # Bytecode writing off (container images often set this) and a torch installed without .pyc files (uv's
        # default): every fresh interpreter compiles torch's 1,500 modules from source again, 7.4 s of the warm
        # worker's 13.2 s start on torch 2.15, 2 cores. Written under reprokit's cache instead: the same code runs,
        # and nothing is written beside the user's files. (A torch with its .pyc files keeps using them.)
        del env["PYTHONDONTWRITEBYTECODE"]
        env["PYTHONPYCACHEPREFIX"] = os.path.join(cache_root, "pycache")
    env.update({k: v.replace("{trial_dir}", trial_dir) for k, v in (spec.env or {}).items()})
    if spec.stage == "none":
        env["TORCHDYNAMO_DISABLE"] = "1"
    if spec.mode == "script":
        # Its own rendezvous port: trials side by side never meet at the script's port (EADDRINUSE).
        env["MASTER_PORT"] = str(free_port())
    if spec.subsystem and "name" in spec.subsystem:  # several names at once: the child's probe turns them off
        env["TORCH_BISECT_BACKEND"] = spec.subsystem["backend"]
        env["TORCH_BISECT_SUBSYSTEM"] = spec.subsystem["name"]
        env["TORCH_BISECT_MAX"] = str(spec.subsystem["max"])
    return env


def with_device(env: dict, device: str | None) -> dict:
    """The environment pinned to `device` (CUDA_VISIBLE_DEVICES) on a machine with several GPUs."""
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


def ranks_of(spec: TrialSpec) -> int:
    """Processes the trial launches: 1, or its ranks under torchrun."""
    return max(1, spec.ranks)
