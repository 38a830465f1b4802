"""Exceptions a compiled call raised, kept even when the script catches them (issue 50, item 6).

Scripts often wrap the compiled call in try/except, log, and sys.exit(1). The exit alone says nothing of the bug,
and a cut of the script that raises the very error uncaught was refused as another failure. So the first exception
that leaves a compiled callable (or an export or AOTInductor entry point) is kept, and an exit that follows it is
judged as that exception (child/classify.classify_exit)."""

from __future__ import annotations

import functools

from reprokit.child.state import TrialState

# Not failures: a compiled generator's end, and the accuracy check's own error (judged as a mismatch already).
_NOT_FAILURES = (StopIteration, StopAsyncIteration, GeneratorExit)


def keep(state: TrialState, error: BaseException) -> None:
    """Remember `error`, the first exception a compiled call raised in this trial."""
    from reprokit.child.accuracy import AccuracyFailure

    if (
        state.caught is None
        and isinstance(error, Exception)
        and not isinstance(error, (*_NOT_FAILURES, AccuracyFailure))
    ):
        state.caught = error


def calling(state: TrialState, fn, *args, **kwargs):
    """fn(*args, **kwargs), keeping what it raises."""
    try:
        return fn(*args, **kwargs)
    except BaseException as e:
        keep(state, e)
        raise


def watched(state: TrialState, compiled):
    """The compiled callable torch.compile returned, keeping what each call raises: a module's forward is wrapped
    in place (the script keeps its OptimizedModule), a function is wrapped. Called while another compiled function
    is traced, it is the callable itself: Dynamo inlines it as it would, no try/except of ours in its graph."""
    import torch

    compiling = torch.compiler.is_compiling

    def kept(fn):
        return lambda *a, **k: fn(*a, **k) if compiling() else calling(state, fn, *a, **k)

    if isinstance(compiled, torch.nn.Module):
        compiled.forward = kept(compiled.forward)
        return compiled
    if not callable(compiled):
        return compiled
    return functools.wraps(compiled)(kept(compiled))
