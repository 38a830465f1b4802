"""One virtual environment per torch release, made by uv with a shared cache and hard links, under a cache
folder (default ~/.cache/reprokit/torch-envs): created once, reused, measured, removed by --clean."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from reprokit import settings
from reprokit.errors import ReprokitError

# A torch wheel from PyPI with its CUDA libraries is about 5 GB unpacked; a CPU-only index needs far less.
NEEDED_BYTES = 6 << 30
TYPICAL_GIB = 5  # measured: torch 2.14.1 and 2.15.0 from PyPI, 5.2 GiB each, 25-45 s each on 2 cores
MARKER = "reprokit-env.json"
# Besides torch: what repro.py and reprokit's trial child import in the environment.
EXTRA_PACKAGES = ("numpy",)


def default_cache_dir() -> str:
    """$REPROKIT_TORCH_ENVS, else ~/.cache/reprokit/torch-envs."""
    return settings.TORCH_ENVS.get() or os.path.join(os.path.expanduser("~"), ".cache", "reprokit", "torch-envs")


def uv_binary() -> str:
    """The uv executable (pip install uv), or a ReprokitError saying how to get it."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise ReprokitError("uv is not installed: `pip install uv` (reprokit versions makes its environments with it)")


def tree_bytes(path: str) -> int:
    """Bytes of the files under path, each hard-linked file counted once."""
    seen, total = set(), 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def env_python(env_dir: str) -> str:
    return os.path.join(env_dir, "bin", "python")


def _uv_failure(release: str, text: str) -> ReprokitError:
    """One line for what went wrong while uv installed torch."""
    low = text.lower()
    if "no space left" in low:
        return ReprokitError(f"no disk space: installing torch {release} ran out of space")
    if any(s in low for s in ("dns error", "failed to fetch", "error sending request", "connect", "timed out")):
        return ReprokitError(f"no network: could not download torch {release} from the package index")
    if "no solution found" in low or "not found in the package registry" in low:
        return ReprokitError(f"unknown torch release {release}: the package index has no installable wheel of it")
    last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "uv failed")
    return ReprokitError(f"could not install torch {release}: {last}")


def check_space(cache_dir: str, missing: list) -> None:
    """A ReprokitError ("no disk space") unless the environments still to make fit in the cache folder."""
    if not missing:
        return
    os.makedirs(cache_dir, exist_ok=True)
    free = shutil.disk_usage(cache_dir).free
    if free < NEEDED_BYTES * len(missing):
        raise ReprokitError(
            f"no disk space: torch {', '.join(missing)} need(s) about "
            f"{(NEEDED_BYTES * len(missing)) >> 30} GiB in {cache_dir}, {free / 2**30:.1f} GiB free"
        )


def ensure_env(release: str, cache_dir: str, index_url: str | None = None) -> dict:
    """The environment of one release, made when missing: {release, python, created, seconds, bytes}. seconds is
    this call's creation time, or the recorded one of a reused environment."""
    env_dir = os.path.join(cache_dir, f"torch-{release}")
    marker = os.path.join(env_dir, MARKER)
    if os.path.exists(marker):
        with open(marker) as f:
            info = json.load(f)
        return {**info, "python": env_python(env_dir), "created": False}
    check_space(cache_dir, [release])
    uv = uv_binary()
    env = {**os.environ, "UV_CACHE_DIR": os.path.join(cache_dir, "uv-cache"), "UV_LINK_MODE": "hardlink"}
    shutil.rmtree(env_dir, ignore_errors=True)
    started = time.monotonic()
    steps = [
        [uv, "venv", "-q", "--python", sys.executable, env_dir],
        [uv, "pip", "install", "-q", "--python", env_python(env_dir), f"torch=={release}", *EXTRA_PACKAGES]
        + (["--index-url", index_url] if index_url else []),
    ]
    for cmd in steps:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(env_dir, ignore_errors=True)
            raise _uv_failure(release, done.stderr + done.stdout)
    info = {
        "release": release,
        "seconds": round(time.monotonic() - started, 1),
        "bytes": tree_bytes(env_dir),
        "index_url": index_url,
        "made_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    with open(marker, "w") as f:
        json.dump(info, f)
    return {**info, "python": env_python(env_dir), "created": True}


def clean(cache_dir: str) -> dict:
    """Remove every environment and the shared download cache: {"removed": [names], "bytes": freed}."""
    if not os.path.isdir(cache_dir):
        return {"removed": [], "bytes": 0, "cache_dir": cache_dir}
    freed = tree_bytes(cache_dir)
    names = sorted(os.listdir(cache_dir))
    shutil.rmtree(cache_dir)
    return {"removed": names, "bytes": freed, "cache_dir": cache_dir}
