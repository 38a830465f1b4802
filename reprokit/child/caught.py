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
    in place (the script keeps its OptimizedModule), a function is wrapped."""
    import torch

    if isinstance(compiled, torch.nn.Module):
        inner = compiled.forward
        compiled.forward = lambda *a, **k: calling(state, inner, *a, **k)
        return compiled
    if not callable(compiled):
        return compiled

    @functools.wraps(compiled)
    def call(*args, **kwargs):
        return calling(state, compiled, *args, **kwargs)

    return call
