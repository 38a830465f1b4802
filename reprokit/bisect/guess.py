"""First guesses at the lowering that breaks a run, from the kernel its failure names."""
from __future__ import annotations

import os
import re

from reprokit.data.records import Outcome
from reprokit.data.trial_files import trial_record

# Inductor names a fused kernel after the ops in it: cpp_fused_mul_relu_sigmoid_1, triton_poi_fused_relu_0.
FUSED_KERNEL = re.compile(r"\b(?:cpp|triton)_\w*?fused_(\w+?)_\d+\b")

MAX_GUESSES = 4


def lowering_guesses(failing: Outcome) -> list[int]:
    """Lowering applications (0-based) worth asking first: the first application of each op named in the fused
    kernel the failure's traceback stops in. Empty when the failure names no kernel (a compile error, an
    accuracy mismatch): then the usual search runs alone."""
    ops = trial_record(failing.trial_dir).get("lowering_ops") or []
    named = FUSED_KERNEL.findall(_stderr_tail(failing.trial_dir))
    if not ops or not named:
        return []
    fused = [f"_{name}_" for name in named[-2:]]  # the innermost frames: the kernel that raised
    guesses = []
    seen = set()
    for i, target in enumerate(ops):
        base = _op_base(target)
        if base and base not in seen and any(f"_{base}_" in f for f in fused):
            seen.add(base)
            guesses.append(i)
    return guesses[:MAX_GUESSES]


def _op_base(target) -> str:
    """'aten.relu.default' -> 'relu'."""
    parts = str(target or "").split(".")
    return parts[1] if len(parts) >= 2 else ""


def _stderr_tail(trial_dir: str, size: int = 6000) -> str:
    path = os.path.join(trial_dir or "", "stderr.txt")
    if not os.path.exists(path):
        return ""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - size))
        return f.read().decode(errors="replace")
