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
    lo, hi = d.aminmax()  # NaN propagates, an infinity is an end: both finite, every value is
    if math.isfinite(float(lo)) and math.isfinite(float(hi)):
        # the common case, in place: no float32 copy of a big bf16 input, no copy of its finite values
        stats: dict[str, Any] = {
            "mean": float(d.mean(dtype=torch.float32 if d.dtype.itemsize < 4 else d.dtype)),
            "std": float(d.std()) if d.numel() > 1 else 0.0,
            "nonfinite": 0,
            "min": float(lo),
            "max": float(hi),
        }
        stats["special"] = ["zero"] if bool((d == 0).any()) else []
        return stats
    f = d.float()
    finite = f[torch.isfinite(f)]
    stats = {
        "mean": float(finite.mean()) if finite.numel() else 0.0,
        "std": float(finite.std()) if finite.numel() > 1 else 0.0,
        "nonfinite": int(f.numel() - finite.numel()),
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


def synthetic_tensor(shape, dtype, mean=0.0, std=1.0, lo=None, hi=None, special=(), generator=None, device=None):
    """Random values with the recorded mean, std and range, the special values planted first (as repro.py does),
    made on `device` (the CPU by default)."""
    import torch

    # float64 on the CPU, as before (the same values for the same seed); elsewhere the working dtype, drawn where the
    # tensor lives: a 1 GiB activation is no 2 GiB float64 copy moved across.
    work = torch.float64 if device is None or torch.device(device).type == "cpu" or dtype == torch.float64 else None
    work = work or (dtype if dtype.is_floating_point and dtype.itemsize >= 4 else torch.float32)
    t = torch.randn(shape, dtype=work, generator=generator, device=device) * std + mean
    if lo is not None and hi is not None:
        t = t.clamp(lo, hi)
    flat = t.view(-1)
    for i, name in enumerate(list(special)[: flat.numel()]):
        flat[i] = _SPECIAL[name]
    return t.to(dtype)


def synthetic_inputs(inputs_meta: list, seed: int = 0, device=None) -> list:
    """Inputs matched on shape, stride, dtype and value statistics, for when real values were not kept; each made on
    the device it was recorded on (`device` overrides them all), so that a CUDA graph replays as CUDA code."""
    import torch

    generators: dict = {}
    out = []
    for m in inputs_meta:
        if m["kind"] != "tensor":
            out.append(m.get("value"))
            continue
        where = torch.device(device if device is not None else m.get("device", "cpu"))
        gen = _generator(generators, where, seed)
        dtype = getattr(torch, m["dtype"], torch.float32)
        shape, stride = list(m["shape"]), list(m.get("stride") or ())
        if _overlapping(shape, stride):  # an expanded input: its memory is smaller than its elements
            shape = [_extent(m["shape"], stride)]
        t = _values(m, shape, dtype, gen, where)
        if shape != list(m["shape"]):
            t = t.as_strided(m["shape"], stride)
        elif not m.get("contiguous", True):
            t = torch.empty_strided(shape, stride, dtype=dtype, device=where).copy_(t)
        out.append(t.requires_grad_(m.get("requires_grad", False)) if t.is_floating_point() else t)
    return out


def _values(m: dict, shape: list, dtype, gen, where):
    """Values for one recorded tensor of this shape, matched on its statistics, on `where`."""
    import torch

    on = None if where.type == "cpu" else where  # the CPU's tensors are made as they always were
    if dtype.is_floating_point or dtype.is_complex:
        stats = (m.get("mean", 0.0), m.get("std", 1.0), m.get("min"), m.get("max"), m.get("special", ()))
        return synthetic_tensor(shape, dtype, *stats, generator=gen, device=on)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen, device=on) < 0.5
    lo, hi = int(m.get("min", 0)), int(m.get("max", 1))
    return torch.randint(lo, hi + 1, shape, generator=gen, device=on).to(dtype)


def _generator(generators: dict, where, seed: int):
    """One seeded generator per device; None where the device has none (meta: its tensors hold no values)."""
    import torch

    if where not in generators:
        try:
            generators[where] = torch.Generator(device=where).manual_seed(seed)
        except RuntimeError:
            generators[where] = None
    return generators[where]


def _extent(shape, stride) -> int:
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0


def _overlapping(shape, stride) -> bool:
    """Whether elements share memory (a stride of 0 over more than one element, as expand makes)."""
    return bool(stride) and any(s == 0 and n > 1 for n, s in zip(shape, stride))


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
