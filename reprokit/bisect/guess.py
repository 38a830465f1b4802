"""First guesses at the lowering that breaks a run, from the kernel its failure names."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from reprokit.data.records import Outcome
from reprokit.data.trial_files import read_tail, trial_record
from reprokit.fx.graphcase import op_base

# Inductor names a fused kernel after the ops in it: cpp_fused_mul_relu_sigmoid_1, triton_poi_fused_relu_0.
FUSED_KERNEL = re.compile(r"\b(?:cpp|triton)_\w*?fused_(\w+?)_\d+\b")
# Where the output code (TORCH_LOGS=output_code, on in the original run) defines a kernel.
KERNEL_DEFINED = re.compile(r"\b(?:cpp|triton)_\w*?fused_(\w+?)_\d+ = async_compile\.")
# A frame of a traceback or of faulthandler's dump ("line 849, in call" / "line 849 in call").
FRAME = re.compile(r'File "([^"]+\.py)", line (\d+),? in ')
# A C++ compiler error and the source line it quotes ("   15 |     auto tmp1 = ...;").
CPP_ERROR_LINE = re.compile(r"\.cpp:\d+:\d+: error: .*\n\s*\d+ \| (.+)")

MAX_GUESSES = 4


def lowering_guesses(failing: Outcome, same_failures: Iterable[Outcome | None] = ()) -> list[int]:
    """Lowering applications (0-based) worth asking first: the first application of each op named in the fused
    kernel the failure's traceback stops in. Empty when the failure names no kernel (a compile error, an
    accuracy mismatch): then the usual search runs alone.

    same_failures: other runs that failed the same way, read when `failing` names no kernel. A kernel that aborts
    in two OpenMP threads at once cuts faulthandler's dump short at random ("terminate called recursively"): the
    example's lowering search took 7 trials without a guess, 2 with one."""
    ops = trial_record(failing.trial_dir).get("lowering_ops") or []
    named = []
    for outcome in (failing, *same_failures) if ops else ():
        named = failing_kernels(outcome.trial_dir) if outcome is not None and outcome.trial_dir else []
        if named:
            break
    if not named:
        return []
    fused = [f"_{name}_" for name in named]
    guesses = []
    seen = set()
    for i, target in enumerate(ops):
        base = op_base(target)
        if base and base not in seen and any(f"_{base}_" in f for f in fused):
            seen.add(base)
            guesses.append(i)
    return guesses[:MAX_GUESSES]


def failing_kernels(trial_dir: str) -> list[str]:
    """The fused-op part of the kernel names a failure points at: the kernel its traceback stops in (a run-time
    error), or the kernel whose source holds the line a C++ compile error quotes (found in the output code)."""
    text = _read(os.path.join(trial_dir or "", "stderr.txt"))
    # g++ prints its warnings after the error (hundreds of KB of them), so the whole text (its last 2 MB) is searched.
    error = CPP_ERROR_LINE.search(text)
    if error is None:
        return _kernels_called(text[-20000:] + _read(os.path.join(trial_dir or "", "stacks.txt")))
    quoted = error.group(1).strip()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if quoted in line and "error:" not in line and " | " not in line:
            for back in range(i, max(-1, i - 2000), -1):
                defined = KERNEL_DEFINED.search(lines[back])
                if defined:
                    return [defined.group(1)]
    return []


def _kernels_called(text: str) -> list[str]:
    """Kernels called on the lines of inductor's generated modules that the traceback or stack dump stops at (the
    kernel that raised, or that the process died in)."""
    found: list = []
    for path, line in FRAME.findall(text):
        if os.sep + "inductor" + os.sep not in path or os.sep + "site-packages" + os.sep in path:
            continue
        source = _read(path).splitlines()
        n = int(line)
        if 0 < n <= len(source):
            found += [k for k in FUSED_KERNEL.findall(source[n - 1]) if k not in found]
    return found[-2:]


def _read(path: str) -> str:
    return read_tail(path) or ""
