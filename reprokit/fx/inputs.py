"""A graph's inputs without their values: statistics recorded at capture, synthetic tensors matched on them, and
the expressions repro.py writes (synthetic by default, the real values inline when they are few)."""

from __future__ import annotations

import math
from typing import Any

# torch is imported inside the functions that need it: report/render writes repro.py's expressions without it.
INLINE_MAX_ELEMENTS = 64  # real values up to this many elements in all are written into repro.py itself
_SPECIAL = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf"), "zero": 0.0}


def value_stats(t) -> dict:
    """mean/std/min/max of the finite values and which special values (nan, inf, -inf, zero) occur: no values."""
    import torch

    d = t.detach()
    if not d.numel() or d.is_complex():
        return {}
    if not d.is_floating_point():
        return {"min": float(d.min()), "max": float(d.max())}
    f = d.float()
    finite = f[torch.isfinite(f)]
    stats: dict[str, Any] = {
        "mean": float(finite.mean()) if finite.numel() else 0.0,
        "std": float(finite.std()) if finite.numel() > 1 else 0.0,
        "nonfinite": int((~torch.isfinite(f)).sum()),
    }
    if finite.numel():
        stats.update(min=float(finite.min()), max=float(finite.max()))
    present = {
        "nan": bool(torch.isnan(f).any()),
        "inf": bool((f == math.inf).any()),
        "-inf": bool((f == -math.inf).any()),
        "zero": bool((f == 0).any()),
    }
    stats["special"] = [name for name in _SPECIAL if present[name]]
    return stats


def synthetic_tensor(shape, dtype, mean=0.0, std=1.0, lo=None, hi=None, special=(), generator=None):
    """Random values with the recorded mean, std and range, the special values planted first (as repro.py does)."""
    import torch

    t = torch.randn(shape, dtype=torch.float64, generator=generator) * std + mean
    if lo is not None and hi is not None:
        t = t.clamp(lo, hi)
    flat = t.view(-1)
    for i, name in enumerate(list(special)[: flat.numel()]):
        flat[i] = _SPECIAL[name]
    return t.to(dtype)


def synthetic_inputs(inputs_meta: list, seed: int = 0) -> list:
    """Inputs matched on shape, stride, dtype and value statistics, for when real values were not kept."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    out = []
    for m in inputs_meta:
        if m["kind"] != "tensor":
            out.append(m.get("value"))
            continue
        dtype = getattr(torch, m["dtype"], torch.float32)
        shape = m["shape"]
        if dtype.is_floating_point or dtype.is_complex:
            t = synthetic_tensor(
                shape,
                dtype,
                m.get("mean", 0.0),
                m.get("std", 1.0),
                m.get("min"),
                m.get("max"),
                m.get("special", ()),
                generator=gen,
            )
        elif dtype == torch.bool:
            t = torch.rand(shape, generator=gen) < 0.5
        else:
            lo, hi = int(m.get("min", 0)), int(m.get("max", 1))
            t = torch.randint(lo, hi + 1, shape, generator=gen)
        t = t.to(dtype)
        if not m.get("contiguous", True):
            t = torch.empty_strided(shape, m["stride"], dtype=dtype).copy_(t)
        out.append(t.requires_grad_(m.get("requires_grad", False)) if t.is_floating_point() else t)
    return out


def _num(x: float) -> str:
    return repr(x) if math.isfinite(x) else f'float("{x}")'


def _short(x: float, digits: int = 3) -> str:
    """x to a few significant digits: repro.py's statistics are a recipe, not a record."""
    return _num(float(f"{x:.{digits}g}"))


def _bound(x: float, up: bool) -> str:
    """A range's end to 4 significant digits, rounded inwards: the clamped values stay within the recorded range."""
    if x == 0 or not math.isfinite(x):
        return _num(x)
    scale = 10.0 ** (math.floor(math.log10(abs(x))) - 3)
    return _num(float(f"{(math.ceil if up else math.floor)(x / scale) * scale:.4g}"))


def _dims(shape: tuple) -> str:
    return ", ".join(str(d) for d in shape) if shape else "()"


def synthetic_expr(meta: dict, default_dtype: str = "float32") -> str:
    """One expression of repro.py that makes an input like the captured one from its statistics (the caller seeds
    torch's generator once): shape, dtype, stride and device; mean and std; the range where it is narrower than the
    values' spread would give; the special values (NaN, inf, zero) it held, planted first."""
    if meta["kind"] != "tensor":
        return repr(meta.get("value"))
    shape, dtype = tuple(meta["shape"]), meta["dtype"]
    if dtype == "bool":
        expr = f"torch.rand({_dims(shape)}) < 0.5"
    elif dtype.startswith(("int", "uint")):
        lo, hi = int(meta.get("min", 0)), int(meta.get("max", 1))
        kind = "" if dtype == "int64" else f", dtype=torch.{dtype}"
        expr = f"torch.randint({lo}, {hi + 1}, {shape}{kind})"
    else:
        expr = _float_expr(meta, shape, dtype, "" if dtype == default_dtype else f", dtype=torch.{dtype}")
    return _placed(expr, meta)


def _float_expr(meta: dict, shape: tuple, dtype: str, kind: str) -> str:
    """randn scaled and shifted to the recorded std and mean, clamped to the range where it binds."""
    special = list(meta.get("special") or ())[: math.prod(shape)]
    body = (math.prod(shape) - len(special),) if special else shape
    mean, std = meta.get("mean"), meta.get("std")
    if std == 0 and mean is not None:
        expr = f"torch.full({body}, {_short(mean)}{kind})"
    else:
        expr = f"torch.randn({_dims(body)}{kind})"
        if std is not None and _short(std) != "1.0":
            expr += f" * {_short(std)}"
        # A mean within the sampling noise of the values' own mean (std / sqrt(n)) is no part of the recipe.
        if mean and std is not None and abs(mean) > std / math.sqrt(max(1, math.prod(shape))):
            expr += f" + {_short(mean)}" if mean > 0 else f" - {_short(-mean)}"
        expr = _clamped(expr, meta)
    if special:
        planted = ", ".join(_num(_SPECIAL[name]) for name in special)
        expr = f"torch.cat([torch.tensor([{planted}]{kind}), {expr}]).reshape({_dims(shape)})"
    return expr


def _clamped(expr: str, meta: dict) -> str:
    """expr clamped to the recorded range, on the sides where that range is narrower than mean -/+ 2.5 std (a
    domain such as log's or acos's; randn's own tails there are not the input's)."""
    lo, hi, mean, std = meta.get("min"), meta.get("max"), meta.get("mean") or 0.0, meta.get("std") or 0.0
    low = lo is not None and lo > mean - 2.5 * std
    high = hi is not None and hi < mean + 2.5 * std
    if not (low or high):
        return expr
    wrapped = _atom(expr)
    lo_text = _bound(lo, True) if lo is not None else ""
    hi_text = _bound(hi, False) if hi is not None else ""
    if low and high:
        return f"{wrapped}.clamp({lo_text}, {hi_text})"
    return f"{wrapped}.clamp(min={lo_text})" if low else f"{wrapped}.clamp(max={hi_text})"


def _atom(expr: str) -> str:
    """expr in parentheses where a method call on it would bind to its last operand only."""
    depth = 0
    for ch in expr:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == " " and depth == 0:
            return f"({expr})"
    return expr


def _placed(expr: str, meta: dict) -> str:
    shape, dtype = tuple(meta["shape"]), meta["dtype"]
    if meta.get("device", "cpu") != "cpu":
        expr = f"{_atom(expr)}.to({meta['device']!r})"
    if not meta.get("contiguous", True):
        device = "" if meta.get("device", "cpu") == "cpu" else f", device={meta['device']!r}"
        expr = f"torch.empty_strided({shape}, {tuple(meta['stride'])}, dtype=torch.{dtype}{device}).copy_({expr})"
    if meta.get("requires_grad"):
        expr = _atom(expr) + ".requires_grad_()"
    return expr


def inline_expr(value, meta: dict) -> str:
    """The real value as a literal expression of repro.py (for a few elements only)."""
    import torch

    if not isinstance(value, torch.Tensor):
        return repr(value)
    d = value.detach().cpu()
    flat = d.reshape(-1).tolist() if d.dtype != torch.bfloat16 else d.float().reshape(-1).tolist()
    body = "[" + ", ".join(_num(x) if isinstance(x, float) else repr(x) for x in flat) + "]"
    return _placed(f"torch.tensor({body}, dtype=torch.{meta['dtype']}).reshape({tuple(meta['shape'])})", meta)


def inline_exprs(inputs: list, metas: list, attributes: dict, attribute_metas: dict) -> dict | None:
    """{"inputs": [expr], "attributes": {name: expr}} with the real values, or None when they are too many."""
    import torch

    tensors = [t for t in list(inputs) + list(attributes.values()) if isinstance(t, torch.Tensor)]
    if sum(t.numel() for t in tensors) > INLINE_MAX_ELEMENTS or any(t.is_complex() for t in tensors):
        return None
    return {
        "inputs": [inline_expr(v, m) for v, m in zip(inputs, metas)],
        "attributes": {k: inline_expr(v, attribute_metas[k]) for k, v in attributes.items()},
    }
