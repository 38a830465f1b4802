"""A CUDA fault names its kernel only when launches are synchronous: pin it with CUDA_LAUNCH_BLOCKING=1."""
from __future__ import annotations

import os

from reprokit.data.records import Outcome
from reprokit.data.signature import KERNEL_NAME
from reprokit.bisect.session import Session


def pin_cuda_fault(s: Session, stage: str, failing: Outcome) -> dict:
    """Kernel launches are asynchronous: re-run with CUDA_LAUNCH_BLOCKING=1 so the fault names its kernel."""
    out = s.runner(s.spec(stage, "cuda-launch-blocking", env={"CUDA_LAUNCH_BLOCKING": "1"}))
    text = out.traceback or ""
    try:
        with open(os.path.join(out.trial_dir, "stderr.txt"), errors="replace") as f:
            text += f.read()[-200_000:]
    except OSError:
        pass
    kernels = KERNEL_NAME.findall(text)
    return {"fault": failing.signature.message, "kernel": kernels[-1] if kernels else None,
            "trial": out.trial_dir, "same": s.fails_same(out),
            "device_check": out.device_check or failing.device_check}
