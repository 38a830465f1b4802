"""What a trial's ending means: an exception or an exit turned into a result kind and a signature."""

from __future__ import annotations

import dataclasses
import traceback

from reprokit import settings
from reprokit.child.accuracy import AccuracyFailure
from reprokit.child.comparisons import mismatch_reported
from reprokit.child.state import TrialState
from reprokit.data import signature as sig
from reprokit.data.signature import MISMATCH


def passed() -> dict:
    return {"kind": "pass", "signature": sig.PASS.to_dict()}


def classify_exit(state: TrialState, e: SystemExit) -> tuple[dict, int]:
    """(result, exit code) of a script that called sys.exit: 0 passes, anything else is an "exit" failure."""
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if state.accuracy_failure:
        result = classify_exception(state, AccuracyFailure(state.accuracy_failure))
    elif code == 0:
        result = passed()
    else:
        if not isinstance(e.code, int):
            import sys

            print(e.code, file=sys.stderr)
        result = {"kind": "exit", "signature": sig.for_exit(code).to_dict()}
        if mismatch_reported():  # the script's own check: its comparison failed, then it exited
            result["signature"]["cause"] = MISMATCH
            result["note"] = f"the script exited {code} right after a comparison found its tensors differ"
        elif state.caught is not None:
            result = caught_then_exited(state, state.caught, code)
    return result, 1 if code else 0


def caught_then_exited(state: TrialState, error: BaseException, code: int) -> dict:
    """An exit after the script caught what a compiled call raised is that failure (issue 50, item 6): a cut of the
    script that raises it uncaught fails the same way."""
    result = classify_exception(state, error)
    said = sig.first_line(str(error))[:200]
    result["note"] = (
        f"the script caught {type(error).__name__}{': ' + said if said else ''} from a compiled call and exited {code}"
    )
    result["traceback"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-20000:]
    return result


def classify_exception(state: TrialState, exc: BaseException) -> dict:
    """The result of a trial that raised: accuracy, out of memory (skip), a CUDA fault, or an exception."""
    from reprokit import compat

    if state.accuracy_failure or isinstance(exc, AccuracyFailure):
        s = sig.Signature("accuracy", None, "compiled output differs from eager", None)
        return {"kind": "accuracy", "signature": s.to_dict(), "note": state.accuracy_failure or str(exc)}
    frames = [(f.filename, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    name, message, inner = sig.root_cause(exc)
    inner_frames = frames if inner is exc else [(f.filename, f.name) for f in traceback.extract_tb(inner.__traceback__)]
    remote = sig.remote_frames(inner)  # a compile worker's error, as text
    inner_frames = remote or inner_frames
    cause = f"{name}: {sig.normalise_message(message)} @ {sig.innermost_torch_frame(inner_frames, compat.TORCH_ROOT)}"
    text = str(exc)
    if isinstance(exc, AssertionError) and (mismatch_reported() or text.lstrip().startswith(sig.MISMATCH_WORDS)):
        cause = MISMATCH  # a check's comparison failed: the mismatch is the failure, not how it was raised
    s = dataclasses.replace(
        sig.for_exception(type(exc).__name__, str(exc), frames, compat.TORCH_ROOT),
        cause=cause,
        inner=sig.wrapped_error(name, message),
        inner_text=sig.wrapped_said(name, message),
    )
    if remote:  # said as the worker's error, as an in-process compile of the same kernel says it
        s = dataclasses.replace(
            s,
            message=sig.normalise_message(f"{name}: {message}"),
            frame=sig.innermost_torch_frame(remote, compat.TORCH_ROOT),
        )
    if (
        type(exc).__name__ == "OutOfMemoryError" or "out of memory" in text.lower() or "can't allocate memory" in text
    ):  # CUDA's and the CPU allocator's words for it
        # Not the user's bug nor the compiler's: this trial could not say anything.
        return {
            "kind": "skip",
            "signature": sig.Signature("skip", type(exc).__name__, "out of memory").to_dict(),
            "note": "out of memory: the trial was skipped, not counted as the bug",
        }
    if any(m in text for m in sig.CUDA_FAULTS):
        # A device-side assert or illegal access poisons the CUDA context: its own kind, named by the fault.
        told = text + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        blocking = settings.CUDA_LAUNCH_BLOCKING.on()
        return {"kind": "cuda_fault", "signature": sig.for_cuda_fault(type(exc).__name__, told, blocking).to_dict()}
    return {"kind": "exception", "signature": s.to_dict()}
