"""Inputs for a captured graph whose values were not kept: synthetic tensors matched on the recorded metadata."""
from __future__ import annotations

import torch

_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16, "bfloat16": torch.bfloat16,
           "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
           "uint8": torch.uint8, "bool": torch.bool, "complex64": torch.complex64}


def synthetic_inputs(inputs_meta: list, seed: int = 0) -> list:
    """Inputs matched on shape, stride, dtype and value statistics, for when real values were not kept."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for m in inputs_meta:
        if m["kind"] != "tensor":
            out.append(m.get("value"))
            continue
        dtype = _DTYPES.get(m["dtype"], torch.float32)
        shape = m["shape"]
        if dtype.is_floating_point or dtype.is_complex:
            t = torch.randn(shape, generator=gen, dtype=torch.float32) * m.get("std", 1.0) + m.get("mean", 0.0)
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
