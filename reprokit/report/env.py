"""The environment report: collect_env (in a child with the user's interpreter), GPU facts, packages, env vars."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping

from reprokit import settings
from reprokit.data.rundir import RunDir, write_json_atomic
from reprokit.trial.cache import cache_base

ENV_ALLOW = re.compile(
    r"^(TORCH|TORCHINDUCTOR_|TORCHDYNAMO_|TRITON_|CUDA_|NCCL_|PYTORCH_|OMP_|MKL_|KMP_|"
    r"CUBLAS_|CUDNN_|LD_LIBRARY_PATH$|PYTHONPATH$|NVIDIA_|HF_|TRANSFORMERS_)"
)

PACKAGES = (
    "torch",
    "triton",
    "numpy",
    "transformers",
    "accelerate",
    "torchvision",
    "torchaudio",
    "deepspeed",
    "flash-attn",
    "xformers",
    "vllm",
    "sympy",
    "networkx",
    "jinja2",
    "filelock",
    "typing-extensions",
    "nvidia-cudnn-cu12",
    "nvidia-cublas-cu12",
    "nvidia-nccl-cu12",
    "pytorch-triton",
    "reprokit",
)

_COLLECT = r"""
import json, sys
out = {}
try:
    import torch.utils.collect_env as ce
    info = ce.get_env_info()
    out["text"] = ce.pretty_str(info)
    out["json"] = {k: (v if isinstance(v, (str, int, float, bool, type(None))) else str(v)) for k, v in info._asdict().items()}
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
try:
    import torch
    out["torch"] = torch.__version__
    out["cuda_build"] = torch.version.cuda
    out["cuda_available"] = torch.cuda.is_available()
    if torch.cuda.is_available():
        out["gpus"] = [{"name": torch.cuda.get_device_name(i),
                        "capability": ".".join(map(str, torch.cuda.get_device_capability(i)))}
                       for i in range(torch.cuda.device_count())]
except Exception as e:
    out["torch_error"] = f"{type(e).__name__}: {e}"
from importlib import metadata
pk = {}
for name in sys.argv[1:]:
    try:
        pk[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
out["packages"] = pk
out["python"] = sys.version
print(json.dumps(out))
"""

NVIDIA_QUERY = "name,driver_version,memory.total,compute_cap,mig.mode.current,ecc.mode.current,pci.bus_id,power.limit"


def nvidia_smi() -> dict | None:
    """GPU and driver facts from nvidia-smi, or None where there is no nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        q = subprocess.run(
            [exe, f"--query-gpu={NVIDIA_QUERY}", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        )
        full = subprocess.run([exe], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    keys = NVIDIA_QUERY.split(",")
    gpus = [dict(zip(keys, (c.strip() for c in line.split(",")))) for line in q.stdout.splitlines() if line.strip()]
    return {"gpus": gpus, "text": full.stdout}


REUSE_SECONDS = 24 * 3600  # an answer collect_env gave for the same install, at most this old, is given again


def collect(python: str = sys.executable, timeout: float = 120) -> dict:
    """Everything about the machine a maintainer asks for: collect_env's answer for this very install (see
    install_key), else collected now in a fresh child process; nvidia-smi's facts are always read now."""
    key = install_key(python)
    kept = os.path.join(_reuse_dir(), f"{key}.json") if key else None
    try:
        if kept and time.time() - os.stat(kept).st_mtime < REUSE_SECONDS:
            with open(kept) as f:
                return {**json.load(f), "nvidia_smi": nvidia_smi()}
    except (OSError, ValueError):
        pass
    data = _collect_now(python, timeout)
    if kept and "error" not in data and "torch_error" not in data:
        os.makedirs(os.path.dirname(kept), exist_ok=True)
        write_json_atomic(kept, data)
    return {**data, "nvidia_smi": nvidia_smi()}


def install_key(python: str) -> str | None:
    """What collect_env's answer depends on that can change between runs: the interpreter, its installed packages
    (site-packages changes with every install), the kernel, the NVIDIA driver and the GPUs visible. It costs about
    3 s a run (importing torch in a fresh child). None for another interpreter than this one, or with
    REPROKIT_CACHE_DIR=run: collected afresh."""
    import hashlib
    import platform
    import sysconfig

    if os.path.realpath(python) != os.path.realpath(sys.executable) or settings.CACHE_DIR.get() == "run":
        return None
    parts = [os.path.realpath(python), platform.release(), repr(settings.CUDA_VISIBLE_DEVICES.get())]
    for folder in sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")}):
        try:
            parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
        except OSError:
            parts.append(folder)
    try:
        with open("/proc/driver/nvidia/version") as f:
            parts.append(f.read())
    except OSError:
        pass
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _reuse_dir() -> str:
    return os.path.join(cache_base(), "env")


def _collect_now(python: str, timeout: float) -> dict:
    """collect_env and the packages, in a fresh child process of `python`."""
    try:
        p = subprocess.run(
            [python, "-c", _COLLECT, *PACKAGES],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={k: v for k, v in os.environ.items() if k != "TORCHDYNAMO_DISABLE"},
        )
        data = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {"error": p.stderr[-2000:]}
    except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError) as e:
        data = {"error": f"collect_env failed: {type(e).__name__}"}
    return data


def environment_report(run: RunDir) -> dict:
    """collect_env etc., collected once per run folder and kept there (packing twice gives the same bytes)."""
    if not run.exists("env.json"):
        run.write_json("env.json", collect(run.read_json("run.json").get("python") or sys.executable))
    return run.read_json("env.json")


def allowed_env(env: Mapping[str, str] | None = None) -> dict:
    env = os.environ if env is None else env
    return {k: v for k, v in sorted(env.items()) if ENV_ALLOW.match(k)}


def summary_text(data: dict) -> str:
    """A short human report (reprokit env)."""
    lines = [data.get("text") or f"collect_env unavailable: {data.get('error')}"]
    smi = data.get("nvidia_smi")
    if smi and smi.get("gpus"):
        lines.append("\nnvidia-smi:")
        for g in smi["gpus"]:
            lines.append("  " + ", ".join(f"{k}={v}" for k, v in g.items()))
    elif smi is None:
        lines.append("\nnvidia-smi: not found (no NVIDIA driver on this machine)")
    if data.get("packages"):
        lines.append("\npackages: " + ", ".join(f"{k}=={v}" for k, v in sorted(data["packages"].items())))
    return "\n".join(lines)
