"""compute-sanitizer, where CUDA's toolkit is installed: a trial runs under it (trial.launch.child_command, when
its env sets SANITIZER_ENV), and its report names the kernel that faulted, where CUDA's own error names none."""

from __future__ import annotations

import os
import re

from reprokit import settings
from reprokit.data.records import Outcome
from reprokit.data.trial_files import read_tail

SANITIZER_ENV, SANITIZER_TOOL = settings.SANITIZER.name, "memcheck"
# The device frame it names ("at triton_poi_fused_relu_0+0x1b0"); a device assert's own frame (__assertfail) is
# CUDA's, no kernel of the package.
_SANITIZER_FRAME = re.compile(r"^=+\s+at (?:0x[0-9a-f]+ in )?([A-Za-z][\w:]*)", re.M)
_SANITIZER_ERROR = re.compile(
    r"^=+ ((?:Invalid|Program hit|Device|Misaligned|Out of range|Malloc|Barrier|"
    r"Hardware|Warp|Lane|Assert)[^\n]*)",
    re.M,
)


def sanitizer_path() -> str | None:
    """compute-sanitizer on PATH or in a CUDA toolkit under /usr/local; None where it is not installed."""
    import glob
    import shutil

    found = shutil.which("compute-sanitizer")
    return found or next(iter(sorted(glob.glob("/usr/local/cuda*/bin/compute-sanitizer"), reverse=True)), None)


def sanitizer_report(text: str, trial: str) -> dict | None:
    """What compute-sanitizer said: {"error": its first report line, "kernel": the device frame it named,
    "trial"}; None when it reported nothing."""
    error = _SANITIZER_ERROR.search(text)
    frame = _SANITIZER_FRAME.search(text)
    if not (error or frame):
        return None
    return {
        "error": error.group(1).strip()[:200] if error else None,
        "kernel": frame.group(1) if frame else None,
        "trial": trial,
    }


def trial_text(out: Outcome) -> str:
    """A trial's stdout and stderr (their last 400 kB each)."""
    return "".join(read_tail(os.path.join(out.trial_dir, name), 400_000) or "" for name in ("stdout.txt", "stderr.txt"))
