"""Elements of eager's outputs that eager never wrote (torch.empty, new_empty and the like): found by running eager
again with torch's fill of uninitialized memory (NaN, or the integer maximum), and left out of the accuracy check.
A compiled program that leaves other garbage there is no compiler bug (pytorch/pytorch#93437)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable


def may_leave_unwritten(gm) -> bool:
    """Whether the graph allocates memory it may not fill: any call of an empty-like op (cheap to ask; the second
    eager run is paid only then)."""
    graph = getattr(gm, "graph", None)
    return graph is not None and any("empty" in str(getattr(n, "target", "")) for n in graph.nodes)


def unwritten_masks(run_again: Callable[[], object], first: list) -> list | None:
    """Per output of the first eager run: a bool mask of the elements a second run, with uninitialized memory
    filled, disagrees on (None where nothing differs or the output is no tensor); None when the run fails."""
    import torch

    try:
        with _filled():
            second = run_again()
    except Exception:
        return None
    seconds = list(second) if isinstance(second, (list, tuple)) else [second]
    masks = []
    for a, b in zip(first, seconds):
        mask = None
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype:
            # NaN beside NaN differs too: the first run's garbage may itself be NaN (memory an earlier fill left),
            # and a NaN kept in the reference would make every comparison of the output pass. The price: in a
            # graph that allocates empty memory, an element eager computes as NaN is left out of the check.
            differ = a.detach() != b.detach()
            mask = differ if bool(differ.any()) else None
        masks.append(mask)
    return masks


def hide(mask, r, o, r64):
    """(r, o, r64) with the elements eager never wrote set to zero in all three, so garbage (NaN or inf
    included) neither differs nor sets the output's magnitude."""
    import torch

    if mask is None or not isinstance(o, torch.Tensor) or o.shape != mask.shape or o.dtype != r.dtype:
        return r, o, r64

    def zeroed(t):
        t = t.detach().clone()
        t[mask.to(t.device)] = 0
        return t

    r64 = zeroed(r64) if isinstance(r64, torch.Tensor) and r64.shape == mask.shape else r64
    return zeroed(r), zeroed(o), r64


@contextlib.contextmanager
def _filled():
    """torch fills the memory empty() and its kin return, as it does under deterministic algorithms (warn only:
    an op with no deterministic kernel still runs)."""
    import torch

    was, warn_only = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    # The module's class holds this switch as a property (torch/utils/deterministic.py): unseen by mypy.
    fill = torch.utils.deterministic.fill_uninitialized_memory  # type: ignore[attr-defined]
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True  # type: ignore[attr-defined]
    try:
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = fill  # type: ignore[attr-defined]
        torch.use_deterministic_algorithms(was, warn_only=warn_only)
