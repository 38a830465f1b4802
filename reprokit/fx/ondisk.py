"""A tensor's memory streamed to a file of its own and read back (`--keep-inputs-on-disk`): a big graph input the
replay needs exactly, kept without a second copy of it in the job's memory."""

from __future__ import annotations

import os

CHUNK_BYTES = 64 << 20  # a CUDA tensor passes through host memory this much at a time


def write(t, path: str) -> int:
    """t's memory span (storage offset to its last element) written to path as raw bytes; the bytes written.

    A CPU tensor is written from its own memory (a NumPy view, no copy); another device's passes through host
    memory CHUNK_BYTES at a time, never whole."""
    import torch

    from reprokit.fx import aliases

    d = t.detach()
    span = d.as_strided((aliases.extent(d),), (1,), d.storage_offset())
    raw = span.view(torch.uint8) if span.numel() else torch.empty(0, dtype=torch.uint8)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        for start in range(0, raw.numel(), CHUNK_BYTES):
            part = raw[start : start + CHUNK_BYTES]
            f.write((part.numpy() if part.device.type == "cpu" else part.cpu().numpy()).data)
    os.replace(tmp, path)
    return raw.numel()


def read(path: str, meta: dict, device=None):
    """The tensor meta describes (shape, stride, dtype, device), its values from path, on its recorded device
    (`device` overrides it)."""
    import torch

    dtype = getattr(torch, meta["dtype"])
    size = os.path.getsize(path)
    raw = (
        torch.from_file(path, shared=False, size=size, dtype=torch.uint8) if size else torch.empty(0, dtype=torch.uint8)
    )
    flat = raw.view(dtype) if size else torch.empty(0, dtype=dtype)
    t = flat.as_strided(meta["shape"], meta["stride"])
    where = device if device is not None else meta.get("device", "cpu")
    if torch.device(where).type != "cpu":
        t = t.to(where)
    return t.requires_grad_(bool(meta.get("requires_grad"))) if t.is_floating_point() else t
