"""An AOTInductor run failure that names no kernel ("RuntimeError: Unknown exception" from the loader), named by
kernel: the package is built and run once more with AOTI's own debug switch that prints each kernel's name before
and after its launch (`aot_inductor.debug_intermediate_value_printer = "3"`). The kernel launched and never
finished is the one that failed. On CUDA, after a fault (device-side assert, illegal memory access), the re-run
launches synchronously (CUDA_LAUNCH_BLOCKING=1, bisect/cuda.py), so the launch that failed is the one left
unfinished; where CUDA's toolkit is installed, compute-sanitizer runs the package once more beside it."""

from __future__ import annotations

import re

from reprokit.bisect.session import Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome
from reprokit.data.signature import KERNEL_NAME
from reprokit.trial.sanitizer import SANITIZER_ENV, SANITIZER_TOOL, sanitizer_path, sanitizer_report, trial_text

# AOTI's switch, as a config the trial hands to aoti_compile_and_package (child.export_router merges spec.config).
PRINTER = {"aot_inductor.debug_intermediate_value_printer": "3"}
_LAUNCH = re.compile(r"\[ (before|after)_launch: ([\w.:]+) \]")


def names_no_kernel(outcome: Outcome) -> bool:
    """A crash whose message names no generated kernel (AOTI's loader says only "Unknown exception"); a wrong
    value (the script's assert, reprokit's accuracy check) is no kernel's crash."""
    sig = outcome.signature
    text = " ".join(filter(None, (sig.message, sig.cause, outcome.traceback)))
    wrong_value = outcome.kind == OutcomeKind.ACCURACY or sig.exc_type == "AssertionError"
    return outcome.failed and not wrong_value and not KERNEL_NAME.search(text)


def unfinished_kernel(text: str) -> tuple:
    """(the last kernel launched that never finished, every kernel launched in order) from the printer's lines."""
    launched, open_ = [], []
    for when, name in _LAUNCH.findall(text):
        if when == "before":
            launched.append(name)
            open_.append(name)
        elif name in open_:
            open_.remove(name)
    return (open_[-1] if open_ else None), launched


def name_aoti_kernel(s: Session, stage: str, failing: Outcome, sanitize: bool = False) -> dict | None:
    """Re-run with AOTI's kernel-name printer (and, for a CUDA fault, under compute-sanitizer where it is
    installed, beside it): {"kernel", "launched", "switch", "trial", "same", "sanitizer"}; None when neither names
    a kernel."""
    exe = sanitizer_path() if sanitize else None
    specs = [s.spec(stage, "aoti-kernel-names", config=dict(PRINTER))]
    if exe:
        specs.append(s.spec(stage, "aoti-compute-sanitizer", env={SANITIZER_ENV: exe}))
    out, *checked = s.runner.map(specs)
    kernel, launched = unfinished_kernel(trial_text(out))
    sanitizer = sanitizer_report(trial_text(checked[0]), checked[0].trial_dir) if checked else None
    blocking = "CUDA_LAUNCH_BLOCKING=1, " if (s.runner.env or {}).get("CUDA_LAUNCH_BLOCKING") == "1" else ""
    switch = blocking + ", ".join(f"{k}={v!r}" for k, v in PRINTER.items())
    if kernel is None and sanitizer and sanitizer.get("kernel"):
        kernel, switch, out = sanitizer["kernel"], f"compute-sanitizer --tool {SANITIZER_TOOL}", checked[0]
    if kernel is None:
        return None
    return {
        "kernel": kernel,
        "launched": launched[-5:],
        "switch": switch,
        "trial": out.trial_dir,
        "same": s.fails_same(out),
        "sanitizer": sanitizer,
    }


def describe(found: dict) -> str:
    """One sentence for the verdict's message and ISSUE.md."""
    said = found.get("sanitizer") or {}
    also = (
        f"; compute-sanitizer: {said['error']}" + (f" in {said['kernel']}" if said.get("kernel") else "")
        if said.get("error")
        else ""
    )
    return (
        f"AOTInductor's package failed inside kernel {found['kernel']} (launched, never finished; named by "
        f"re-running with {found['switch']}){also}"
    )


_INPUT_CHECK = re.compile(r"input_handles\[\d+\]: (?:unmatched|dim value is too)[^\n]*")


def check_inputs(s: Session, stage: str) -> dict | None:
    """Re-run with AOTI's input checks on (AOTI_RUNTIME_CHECK_INPUTS=1, off by default): {"error", "trial"} when
    the package refuses an input of another dtype, size or stride than the example it was compiled for."""
    out = s.runner(s.spec(stage, "aoti-check-inputs", env={"AOTI_RUNTIME_CHECK_INPUTS": "1"}))
    m = _INPUT_CHECK.search(" ".join(filter(None, (out.signature.message, out.traceback))))
    return {"error": m.group(0).strip(), "trial": out.trial_dir} if m else None


def describe_inputs(found: dict) -> str:
    """One sentence for the verdict's message and ISSUE.md."""
    return (
        f"the package was called with an input unlike the example it was compiled for, and checks none by "
        f"default: AOTI_RUNTIME_CHECK_INPUTS=1 refuses it ({found['error']}). Fix: export with an example laid "
        "out as the callers' inputs are (e.g. x.contiguous() for a slice), or run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1"
    )
