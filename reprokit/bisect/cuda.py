"""An asynchronous CUDA fault (device-side assert, illegal memory access) surfaces at whatever call synchronises
next, so whether and where a trial sees it depends on timing. Once the original run's failure is one, every later
trial runs with CUDA_LAUNCH_BLOCKING=1: the fault surfaces at the launch of the kernel that raised it, and that
kernel joins its identity (data/signature.py)."""
from __future__ import annotations

import os

from reprokit.data.records import Outcome, Verdict
from reprokit.data.signature import KERNEL_NAME, LAUNCH_BLOCKING_ENV
from reprokit.data.trial_files import read_tail
from reprokit.bisect.findings import say
from reprokit.bisect.session import TORCH_LOGS_ENV, Session


def launch_blocking(s: Session, v: Verdict, original: Outcome) -> Outcome:
    """Run the original again with synchronous launches and make its fault and kernel the target; every later
    trial (graph, lowering, config, minify, repro verification) runs so too. Returns what later steps take for
    the original (the inductor stage, when the script compiles with inductor)."""
    s.runner.env = dict(LAUNCH_BLOCKING_ENV)
    # Its own key (the switch in its env): with the original's env alone the journal would answer for it.
    out = s.runner(s.spec("user", "original-launch-blocking", env={**TORCH_LOGS_ENV, **LAUNCH_BLOCKING_ENV}))
    kernels = KERNEL_NAME.findall(_text(out))
    same = out.kind == "cuda_fault" and out.signature.message == original.signature.message
    v.cuda_fault = {"fault": original.signature.message, "kernel": kernels[-1] if kernels else None,
                    "trial": out.trial_dir, "same": same, "launch_blocking": same,
                    "device_check": out.device_check or original.device_check}
    if not same:
        # Synchronous launches change what happens: the search goes on with the launches as the script had them.
        s.runner.env = {}
        say(v, f"with CUDA_LAUNCH_BLOCKING=1 the script gives {out.signature.short()} instead; the trials ran "
               "with asynchronous launches")
        return original
    s.target = out.signature
    v.signature = out.signature.to_dict()
    return out


def _text(out: Outcome) -> str:
    return (out.traceback or "") + (read_tail(os.path.join(out.trial_dir, "stderr.txt"), 200_000) or "")
