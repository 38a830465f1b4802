"""An asynchronous CUDA fault (device-side assert, illegal memory access) surfaces at whatever call synchronises
next, so whether and where a trial sees it depends on timing. Once the original run's failure is one, every later
trial runs with CUDA_LAUNCH_BLOCKING=1: the fault surfaces at the launch of the kernel that raised it, and that
kernel joins its identity (data/signature.py)."""

from __future__ import annotations

import glob
import os
import re
from dataclasses import replace

from reprokit.bisect.findings import say
from reprokit.bisect.session import TORCH_LOGS_ENV, Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome
from reprokit.data.signature import LAUNCH_BLOCKING_ENV
from reprokit.data.trial_files import read_tail
from reprokit.trial.sanitizer import SANITIZER_ENV, sanitizer_path, sanitizer_report, trial_text


def launch_blocking(s: Session, found: Isolation, original: Outcome) -> tuple[Isolation, Outcome]:
    """Run the original again with synchronous launches and make its fault and kernel the target; every later
    trial (graph, lowering, config, minify, repro verification) runs so too. Returns the isolation with the fault
    found, and what later steps take for the original (the inductor stage, when the script compiles with
    inductor)."""
    s.use_policy(env=LAUNCH_BLOCKING_ENV)
    # Its own key (the switch in its env): with the original's env alone the journal would answer for it.
    out = s.runner(s.spec("user", "original-launch-blocking", env={**TORCH_LOGS_ENV, **LAUNCH_BLOCKING_ENV}))
    text = _text(out)
    same = out.kind == OutcomeKind.CUDA_FAULT and out.signature.message == original.signature.message
    asserting = asserting_kernel(text, text + _trace_text(out))
    kernel = asserting or launched_kernel(out.traceback or "")
    fault = {
        "fault": original.signature.message,
        "kernel": kernel,
        "named_by": "message" if asserting else "launch" if kernel else None,
        "trial": out.trial_dir,
        "same": same,
        "launch_blocking": same,
        "device_check": out.device_check or original.device_check,
    }
    found = replace(found, cuda_fault=sanitized(s, fault) if kernel is None and same else fault)
    if not same:
        # Synchronous launches change what happens: the search goes on with the launches as the script had them.
        s.use_policy(env={})
        said = (
            f"with CUDA_LAUNCH_BLOCKING=1 the script gives {out.signature.short()} instead; the trials ran "
            "with asynchronous launches"
        )
        return say(found, said), original
    s.chase(out.signature)
    return replace(found, signature=out.signature.to_dict()), out


# A frame of inductor's generated wrapper (a module in its cache, named by a hash: .../ab/cab...xyz.py) at the
# line that launched a kernel: "    triton_poi_fused_mul_0.run(buf0, ..., stream=stream0)".
_WRAPPER_LAUNCH = re.compile(r'File "[^"\n]*/c[a-z0-9]{40,}\.py", line \d+, in \w+\n\s+(\w+)\.run\(')


def launched_kernel(traceback: str) -> str | None:
    """The kernel at whose launch (synchronous, CUDA_LAUNCH_BLOCKING=1) the fault was raised: the last launch line
    of inductor's wrapper in the traceback. Only there: the trial's logs name every kernel the wrapper holds."""
    found = _WRAPPER_LAUNCH.findall(traceback)
    return found[-1] if found else None


def sanitized(s: Session, fault: dict) -> dict:
    """`fault` with what compute-sanitizer says, where it is installed: no kernel named yet (a fault in a kernel the
    script brought, a launch the traceback does not show), one more run under its memcheck, whose report names
    the faulting kernel."""
    exe = sanitizer_path()
    if not exe:
        return fault
    out = s.runner(s.spec("user", "original-compute-sanitizer", env={**LAUNCH_BLOCKING_ENV, SANITIZER_ENV: exe}))
    said = sanitizer_report(trial_text(out), out.trial_dir)
    if not said:
        return fault
    fault = {**fault, "sanitizer": said}
    if said.get("kernel"):
        fault["kernel"], fault["named_by"] = said["kernel"], "sanitizer"
    return fault


# What CUDA prints for each thread whose device-side assert failed: "<file>:<line>: <function>: block: [..],
# thread: [..] Assertion `<message>` failed." The function is "unknown" when the assert sits in a helper
# (triton_helpers.device_assert_then), and AOTInductor's compile-time run of its kernels surfaces the fault later,
# at a call that names no kernel, even with synchronous launches: the message is what names the kernel.
_ASSERTION = re.compile(r"Assertion `(.+?)` failed")
_TRITON_DEF = re.compile(r"\bdef (triton_\w+)\(")


def asserting_kernel(printed: str, sources: str) -> str | None:
    """The one generated Triton kernel whose source holds, as a string literal, the message a failed device-side
    assert printed (inductor's "index out of bounds: 0 <= tmp4 < 8", an injected assert); None when no kernel
    or several do."""
    found = set()
    for message in set(_ASSERTION.findall(printed)):
        for literal in (f'"{message}"', f"'{message}'"):
            start = 0
            while (at := sources.find(literal, start)) >= 0:
                defs = _TRITON_DEF.findall(sources, 0, at)
                if defs:
                    found.add(defs[-1])
                start = at + len(literal)
    return found.pop() if len(found) == 1 else None


def _trace_text(out: Outcome) -> str:
    """The trial's structured trace (TORCH_TRACE), where inductor logs each kernel's source, AOTInductor's too."""
    return "".join(
        read_tail(p, 20_000_000) or "" for p in sorted(glob.glob(os.path.join(out.trial_dir, "trace", "*.log")))
    )


def _text(out: Outcome) -> str:
    return (out.traceback or "") + (read_tail(os.path.join(out.trial_dir, "stderr.txt"), 200_000) or "")
