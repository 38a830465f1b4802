"""The script's own tensor comparisons, watched: whether the last one found a mismatch, so that an exit or an
AssertionError right after it is judged as the mismatch it reports. One accuracy failure is one failure, whether
the script's check calls sys.exit(1), raises from torch.testing.assert_close, or a repro's check raises."""

from __future__ import annotations

import functools

import torch

_last = {"failed": False}
# assert_close's words when the values differ ("Tensor-likes are not close!", "Scalars are not equal!").
_VALUES_DIFFER, _VALUES_UNEQUAL = "are not close!", "are not equal!"


def install() -> None:
    """Wrap torch.allclose, torch.equal (and their Tensor methods) and torch.testing.assert_close, once."""
    if getattr(torch.allclose, "_reprokit_watched", False):
        return
    for owner, name in ((torch, "allclose"), (torch, "equal"), (torch.Tensor, "allclose"), (torch.Tensor, "equal")):
        setattr(owner, name, _watched_bool(getattr(owner, name)))
    torch.testing.assert_close = _watched_assert(torch.testing.assert_close)


def mismatch_reported() -> bool:
    """The last comparison the script made found its tensors differ."""
    return _last["failed"]


def _watched_bool(compare):
    @functools.wraps(compare)
    def watched(*args, **kwargs):
        same = compare(*args, **kwargs)
        if not torch.compiler.is_compiling():  # inside a compiled region it is the program's value, not a check
            _last["failed"] = same is False
        return same

    watched._reprokit_watched = True  # type: ignore[attr-defined]  # marks it ours: never wrapped twice
    return watched


def _watched_assert(assert_close):
    @functools.wraps(assert_close)
    def watched(*args, **kwargs):
        try:
            out = assert_close(*args, **kwargs)
        except AssertionError as e:
            # Values that differ; not a None, a shape or a dtype where a tensor was due (another program).
            _last["failed"] = _VALUES_DIFFER in str(e) or _VALUES_UNEQUAL in str(e)
            raise
        _last["failed"] = False
        return out

    return watched
