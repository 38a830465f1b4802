"""A trial's environment: the user's, scrubbed of reprokit's and torch's switches, with the stage's own set."""

from __future__ import annotations

import functools
import hashlib
import os
import sys

from reprokit import settings
from reprokit.data.kinds import TrialKind
from reprokit.data.ranks import free_port
from reprokit.data.records import TrialSpec
from reprokit.data.warm_cache import CACHES, COMPILE_ERRORS
from reprokit.trial.cache import cache_base, torch_has_bytecode

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


def import_root(python: str | None = None) -> str:
    """The folder a trial's PYTHONPATH starts with, for it to import this reprokit. Installed from a wheel,
    reprokit's parent is site-packages, torch beside it: under another interpreter (`reprokit versions` runs each
    release's own) it would come before that interpreter's torch, and the release asked would be this one. There a
    folder of reprokit's cache that holds a link to the package alone stands in."""
    if python in (None, sys.executable) or os.path.isfile(os.path.join(PACKAGE_PARENT, "pyproject.toml")):
        return PACKAGE_PARENT  # this interpreter, or a checkout: the folder holds no other installed package
    return _package_alone(os.path.join(PACKAGE_PARENT, "reprokit"), cache_base())


@functools.cache
def _package_alone(package: str, cache: str) -> str:
    root = os.path.join(cache, "import", hashlib.sha256(package.encode()).hexdigest()[:16])
    link = os.path.join(root, "reprokit")
    if os.path.realpath(link) != os.path.realpath(package):
        os.makedirs(root, exist_ok=True)
        made = f"{link}.{os.getpid()}"
        os.symlink(package, made)
        os.replace(made, link)  # at once: a trial starting beside this one never meets a half-made link
    return root


def trial_env(
    spec: TrialSpec,
    cache_root: str,
    trial_dir: str,
    base: dict | None = None,
    compile_errors: str | None = None,
    python: str | None = None,
) -> dict:
    """The environment of one trial: the user's, with reprokit's caches and the stage's switches; compile_errors:
    the run's folder of C++ compile errors a trial may replay (child/compile_errors.py); python: the trial's
    interpreter, when not this one."""
    env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in _SCRUBBED_ENV}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_root, "inductor")
    env["TRITON_CACHE_DIR"] = os.path.join(cache_root, "triton")
    # Compiled-graph caches could answer a trial without running the failing codegen: off.
    env.update({var: "0" for var in CACHES.values()})
    env.pop(COMPILE_ERRORS, None)
    if compile_errors:
        env[COMPILE_ERRORS] = compile_errors
    env["PYTHONPATH"] = os.pathsep.join(p for p in (import_root(python), settings.PYTHONPATH.get(env=env)) if p)
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
    if spec.mode == TrialKind.SCRIPT:
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
