"""The machine's CUDA devices, seen without importing torch in the parent, and a health check after a fault."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from reprokit import settings

# A fault (device-side assert, illegal memory access) poisons the CUDA context of the process that hit it; the
# next trial on that GPU must find the device itself working.
_PROBE = (
    "import torch; x = torch.arange(4, device='cuda'); torch.cuda.synchronize(); "
    "assert int(x.sum()) == 6, 'wrong result'; print(torch.cuda.get_device_name())"
)


def cuda_devices() -> list[str]:
    """Device ids a trial may be pinned to: the user's CUDA_VISIBLE_DEVICES when set, else nvidia-smi's list."""
    visible = settings.CUDA_VISIBLE_DEVICES.get()
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [str(i) for i, line in enumerate(l for l in out.splitlines() if l.startswith("GPU "))]


def device_healthy(device: str | None, timeout: float = 120.0) -> tuple[bool, str]:
    """(healthy, what the probe said): a fresh process allocates, computes and synchronises on the device."""
    env = dict(os.environ)
    if device is not None:
        env[settings.CUDA_VISIBLE_DEVICES.name] = device
    try:
        p = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, f"the probe did not finish in {timeout:.0f} s"
    if p.returncode == 0:
        return True, f"healthy ({p.stdout.strip()})"
    return False, (p.stderr.strip().splitlines() or ["probe failed"])[-1][:300]
