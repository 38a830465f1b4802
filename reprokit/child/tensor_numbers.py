"""The numbers of a float comparison: errors in float64 without rounding of their own, their largest element and
root mean square, the noise floor under which a difference is rounding, and elements as JSON."""

from __future__ import annotations

from typing import Any

ULPS = 64  # strict level: a difference under this many ulp of the output's magnitude is rounding, never a bug


def float_numbers(r, o, r64) -> dict:
    """The numbers of a float measure (see child/accuracy.tensor_measure)."""
    import torch

    wr, wo = wide(r), wide(o)
    diff = error(wo, wr)
    finfo = torch.finfo(r.real.dtype if r.is_complex() else r.dtype)
    nums: dict[str, Any] = {
        "max_abs": top(diff),
        "max_rel": top(diff / (wr.abs() + finfo.tiny)),
        "compiled_vs_fp64": None,
        "eager_vs_fp64": None,
    }
    if r64 is not None:
        w64 = wide(r64)
        ec, ee = error(wo, w64), error(wr, w64)
        nums.update(
            compiled_vs_fp64=top(ec), eager_vs_fp64=top(ee), compiled_rms_vs_fp64=rms(ec), eager_rms_vs_fp64=rms(ee)
        )
    base = wide(r64) if r64 is not None else wr
    finite = base.abs()[torch.isfinite(base.abs())]
    nums["magnitude"] = top(finite)
    nums["noise_floor"] = ULPS * finfo.eps * max(nums["magnitude"], finfo.tiny)
    if diff.numel():
        j = int(diff.flatten().argmax())
        at = [int(x) for x in torch.unravel_index(torch.tensor(j), tuple(r.shape))] if r.dim() else []
        nums["worst"] = {
            "at": at,
            "eager": number(r.flatten()[j]),
            "compiled": number(o.flatten()[j]),
            "fp64": number(r64.flatten()[j]) if r64 is not None else None,
        }
    return nums


def wide(t):
    """t in float64 (complex128 for complex): differences without rounding of their own."""
    import torch

    return t.to(torch.complex128 if t.is_complex() else torch.float64)


def error(x, ref):
    """|x - ref| per element: 0 where both are the same infinity or both NaN, inf where only one is NaN."""
    import torch

    e = (x - ref).abs()
    agree = (x == ref) | (torch.isnan(x) & torch.isnan(ref))
    return torch.nan_to_num(torch.where(agree, torch.zeros_like(e), e), nan=float("inf"))


def top(t) -> float:
    """The largest element as a float (0.0 for an empty tensor)."""
    return float(t.max()) if t.numel() else 0.0


def rms(t) -> float:
    """Root mean square of the elements (0.0 for an empty tensor)."""
    return float(t.square().mean().sqrt()) if t.numel() else 0.0


def exactly_equal(a, b) -> bool:
    """Same dtype, shape and values (NaN equal to NaN)."""
    import torch

    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if torch.equal(a, b):
        return True
    return (a.is_floating_point() or a.is_complex()) and bool(torch.all(error(wide(a), wide(b)) == 0))


def number(t):
    """One element as JSON: a float, an int, a bool, or a complex number's repr."""
    v = t.item()
    return repr(v) if isinstance(v, complex) else v


def dtype_name(dtype) -> str:
    """torch.float32 -> 'float32'."""
    return str(dtype).replace("torch.", "")
