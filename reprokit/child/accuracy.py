"""The one accuracy check of compiled graphs: outputs against eager, judged with a float64 reference."""
from __future__ import annotations


class AccuracyFailure(Exception):
    """A compiled graph's outputs differ from the same graph run eagerly."""


def eager_reference(gm, args):
    """(eager result, float64 result) of the graph on copies of args; None where it cannot be had."""
    import copy

    import torch

    from reprokit import compat

    def clone(a):
        return a.detach().clone() if isinstance(a, torch.Tensor) else a

    try:
        with torch.no_grad():
            ref = gm(*[clone(a) for a in args])
            fp64 = None
            try:
                m64, a64 = compat.cast_to_fp64(copy.deepcopy(gm), [clone(a) for a in args])
                fp64 = m64(*a64)
            except Exception:
                fp64 = None
        return (ref, fp64)
    except Exception:
        return None


def compare_outputs(reference, out) -> str | None:
    """A one-line description of the mismatch, or None when the outputs agree."""
    import torch

    ref, fp64 = reference
    refs = ref if isinstance(ref, (list, tuple)) else (ref,)
    outs = out if isinstance(out, (list, tuple)) else (out,)
    f64s = fp64 if isinstance(fp64, (list, tuple)) else (fp64,) * len(refs)
    for i, (r, o, r64) in enumerate(zip(refs, outs, f64s)):
        if not isinstance(r, torch.Tensor) or not isinstance(o, torch.Tensor):
            continue
        mismatch = _compare_tensor(r, o.detach(), r64 if isinstance(r64, torch.Tensor) else None)
        if mismatch:
            return f"output {i}: {mismatch}"
    return None


def _compare_tensor(r, o, r64) -> str | None:
    import torch

    from reprokit import compat

    if r.dtype != o.dtype or r.shape != o.shape:
        return f"{o.dtype}{list(o.shape)} vs eager {r.dtype}{list(r.shape)}"
    if r.is_floating_point() or r.is_complex():
        if not compat.same(r, o, fp64_ref=r64):
            diff = (o.double() - r.double()).abs()
            diff = diff[~torch.isnan(diff)] if diff.numel() else diff
            worst = float(diff.max()) if diff.numel() else float("nan")
            return f"max abs diff {worst:.3g}"
    elif not torch.equal(r, o):
        # torch's after_aot accuracy check skips non-float outputs; a wrong index is still wrong.
        return f"{int((r != o).sum())} of {r.numel()} {r.dtype} elements differ"
    return None
