"""A graph's inputs without their values: statistics recorded at capture, synthetic tensors matched on them, and
the expressions repro.py writes (synthetic by default, the real values inline when they are few)."""
from __future__ import annotations

import math

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
    stats = {"mean": float(finite.mean()) if finite.numel() else 0.0,
             "std": float(finite.std()) if finite.numel() > 1 else 0.0,
             "nonfinite": int((~torch.isfinite(f)).sum())}
    if finite.numel():
        stats.update(min=float(finite.min()), max=float(finite.max()))
    present = {"nan": bool(torch.isnan(f).any()), "inf": bool((f == math.inf).any()),
               "-inf": bool((f == -math.inf).any()), "zero": bool((f == 0).any())}
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
            t = synthetic_tensor(shape, dtype, m.get("mean", 0.0), m.get("std", 1.0), m.get("min"), m.get("max"),
                                 m.get("special", ()), generator=gen)
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


def synthetic_expr(meta: dict) -> str:
    """One expression of repro.py that makes an input like the captured one from its statistics (fixed seed)."""
    if meta["kind"] != "tensor":
        return repr(meta.get("value"))
    shape, dtype = tuple(meta["shape"]), meta["dtype"]
    if dtype == "bool":
        expr = f"torch.rand({shape}) < 0.5"
    elif dtype.startswith(("int", "uint")):
        lo, hi = int(meta.get("min", 0)), int(meta.get("max", 1))
        expr = f"torch.randint({lo}, {hi + 1}, {shape}, dtype=torch.{dtype})"
    else:
        args = [f"{k}={_num(round(meta[k], 6))}" for k in ("mean", "std") if meta.get(k) is not None]
        if meta.get("min") is not None and meta.get("max") is not None:
            args += [f"lo={_num(meta['min'])}", f"hi={_num(meta['max'])}"]
        if meta.get("special"):
            args.append(f"special={tuple(meta['special'])!r}")
        expr = f"synthetic({shape}, torch.{dtype}" + "".join(", " + a for a in args) + ")"
    return _placed(expr, meta)


def _placed(expr: str, meta: dict) -> str:
    shape, dtype = tuple(meta["shape"]), meta["dtype"]
    if meta.get("device", "cpu") != "cpu":
        expr += f".to({meta['device']!r})"
    if not meta.get("contiguous", True):
        expr = (f"torch.empty_strided({shape}, {tuple(meta['stride'])}, dtype=torch.{dtype}, "
                f"device={meta.get('device', 'cpu')!r}).copy_({expr})")
    if meta.get("requires_grad"):
        expr += ".requires_grad_()"
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
    return {"inputs": [inline_expr(v, m) for v, m in zip(inputs, metas)],
            "attributes": {k: inline_expr(v, attribute_metas[k]) for k, v in attributes.items()}}
