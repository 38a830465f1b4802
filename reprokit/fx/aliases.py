"""Graph inputs that share memory (a tensor and a view of it): found at capture, kept through every copy a trial
makes, rebuilt by repro.py.

AOT autograd compiles inputs that alias each other differently from independent ones (one synthetic base for the
group), and its bugs there (pytorch/pytorch#198095: an input mutated in place while another is a view of it) show
only while the inputs alias. Copying inputs one by one, as saving, eager references and float64 runs did, undoes it:
the graph then passes alone. A group is described by plain data, so meta.json and repro.py can carry it: the inputs'
indices, each one's offset into the span of memory they touch, and that span's length in elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable


def describe(values: list) -> list:
    """[{"inputs": [i, ...], "offsets": [elements from the span's start], "numel": span}] of tensors in values that
    share a storage (same dtype; tensors viewed as another dtype are left independent)."""
    import torch

    by_storage: dict = {}
    for i, v in enumerate(values):
        key = _storage_key(v) if isinstance(v, torch.Tensor) else None
        if key is not None:
            by_storage.setdefault(key, []).append(i)
    groups = []
    for members in by_storage.values():
        if len(members) < 2 or len({values[i].dtype for i in members}) > 1:
            continue
        lo = min(values[i].storage_offset() for i in members)
        hi = max(values[i].storage_offset() + extent(values[i]) for i in members)
        groups.append(
            {"inputs": members, "offsets": [values[i].storage_offset() - lo for i in members], "numel": hi - lo}
        )
    return groups


def _storage_key(t) -> tuple | None:
    """(device, address) of t's memory; None for a tensor with no real memory (fake, empty, a subclass)."""
    import torch

    if type(t) not in (torch.Tensor, torch.nn.Parameter):  # fake tensors and subclasses hold no memory of their own
        return None
    try:
        storage = t.untyped_storage()
        return (str(t.device), storage.data_ptr()) if storage.nbytes() and t.numel() else None
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def extent(t) -> int:
    """Elements of memory t spans from its storage offset."""
    return 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride())) if t.numel() else 0


def spanning(group: dict, values: list) -> int | None:
    """The member that is the whole span (offset 0, contiguous, every element): the base the others view, as a
    script's `x` of `x` and `x[1:]`; None when no member is (views of one unnamed tensor)."""
    for i, offset in zip(group["inputs"], group["offsets"]):
        if spans(group, values[i].shape, values[i].stride(), offset):
            return i
    return None


def spans(group: dict, shape, stride, offset: int) -> bool:
    """Whether a member of this shape and stride at this offset is the group's whole memory, contiguous."""
    return offset == 0 and _contiguous(shape, stride) and math.prod(shape) == group["numel"]


def copied(values: list, copy: Callable, groups: list | None = None) -> list:
    """copy(t) of each tensor in values (other values as they are), each group's members sharing one copy of their
    memory as the originals share theirs: the spanning member copied, the others views of it; or, with no spanning
    member, all views of a copy of the span. copy takes a tensor and returns a new one of the same shape (clone, or
    a cast)."""
    import torch

    groups = describe(values) if groups is None else groups
    grouped = {i for g in groups for i in g["inputs"]}
    out = [copy(v) if isinstance(v, torch.Tensor) and i not in grouped else v for i, v in enumerate(values)]
    for g in groups:
        base = spanning(g, values)
        if base is not None:
            memory = copy(values[base].detach()).contiguous()
        else:
            first = values[g["inputs"][0]].detach()
            memory = copy(first.as_strided((g["numel"],), (1,), first.storage_offset() - g["offsets"][0]))
        for i, offset in zip(g["inputs"], g["offsets"]):
            out[i] = memory if i == base else view_of(memory, values[i].shape, values[i].stride(), offset)
    return out


def slices(base_shape, base_stride, shape, stride, offset: int) -> list | None:
    """[(start, stop)] per dimension where a view of a contiguous base is a plain slice of it (`x[1:]`, as scripts
    make them, and as AOT autograd replays them), or None where only as_strided says it."""
    if len(shape) != len(base_shape) or any(a != b for a, b, n in zip(stride, base_stride, shape) if n != 1):
        return None
    starts, rest = [0] * len(shape), offset
    for dim in sorted(range(len(shape)), key=lambda d: -base_stride[d]):
        if base_stride[dim]:
            starts[dim], rest = divmod(rest, base_stride[dim])
    if rest or any(a + n > m for a, n, m in zip(starts, shape, base_shape)):
        return None
    return [(a, a + n) for a, n in zip(starts, shape)]


def view_of(base, shape, stride, offset: int):
    """base[slices] where the view is a plain slice of base, else base.as_strided(...) (offset from base's start)."""
    cut = slices(tuple(base.shape), base.stride(), tuple(shape), tuple(stride), offset)
    if cut is not None:
        return base[tuple(slice(a, b) for a, b in cut)]
    return base.as_strided(shape, stride, offset + base.storage_offset())


def rebased(values: list, groups: list) -> list:
    """values (which already share memory, as torch.load gives them back) with each group's members views of its
    spanning member again: torch.load makes every tensor a base of its own, and AOT autograd reads `_base`."""
    out = list(values)
    for g in groups:
        base = spanning(g, values)
        if base is None or any(values[i].requires_grad for i in g["inputs"]):
            continue  # a view of a leaf that requires grad is no leaf: left as loaded
        for i, offset in zip(g["inputs"], g["offsets"]):
            if i != base:
                out[i] = view_of(values[base], values[i].shape, values[i].stride(), offset)
    return out


def shared(values: list, groups: list) -> list:
    """values with each group's members made views of one new memory holding their values (a later member's where
    they overlap), shaped as the spanning member where there is one: inputs made one by one (synthetic ones)
    aliasing as the captured ones did."""
    import torch

    out = list(values)
    for g in groups:
        base = spanning(g, values)
        first = values[g["inputs"][0]]
        shape = values[base].shape if base is not None else (g["numel"],)
        memory = torch.zeros(shape, dtype=first.dtype, device=first.device)
        for i, offset in zip(g["inputs"], g["offsets"]):
            v = values[i]
            view = memory if i == base else view_of(memory, v.shape, v.stride(), offset)
            with torch.no_grad():
                view.copy_(v)
            out[i] = view.requires_grad_(v.requires_grad) if v.is_floating_point() and i == base else view
    return out


def _contiguous(shape, stride) -> bool:
    expected = 1
    for size, st in reversed(list(zip(shape, stride))):
        if size != 1 and st != expected:
            return False
        expected *= size
    return True
