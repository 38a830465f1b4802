"""Which of a graph's inputs a capture keeps, and how: the real values up to a cap per tensor and a cap per graph;
an index or mask's exact values always (up to INDEX_BYTES: a random stand-in for token ids, positions or a mask
rarely fails the way they did); with `--keep-inputs-on-disk` the inputs over the caps streamed to disk; the rest
replaced by stand-ins matched on their statistics. Each input's meta says which ("kept": values, disk or
statistics), and where a stand-in may not show a failure, why its values matter."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

from reprokit.data.rundir import write_atomic
from reprokit.fx import aliases, ondisk

INDEX_BYTES = 16 << 20  # an integer or bool input up to this size keeps its exact values, whatever the caps
GRAPH_FACTOR = 4  # the per-graph cap, unless one is given: this many times the per-tensor cap
DISK = "inputs"  # the case folder's folder of inputs streamed to disk, <index>.bin each
# ops whose result depends on which side of a value an input's element falls: a stand-in rarely falls the same way
_BRANCHING = {"gt", "lt", "ge", "le", "eq", "ne", "sign", "argmax", "argmin", "topk", "sort", "floor", "ceil", "round"}


@dataclass(frozen=True)
class Caps:
    """What a capture keeps: per tensor and per graph (None: GRAPH_FACTOR x per tensor), in bytes."""

    per_tensor: int
    per_graph: int | None = None
    index_bytes: int = INDEX_BYTES
    on_disk: bool = False

    def graph_cap(self) -> int:
        return self.per_graph if self.per_graph is not None else GRAPH_FACTOR * self.per_tensor


def plan(inputs: list, metas: list, groups: list, caps: Caps) -> list:
    """Per input: "values", "disk", "statistics", or None for what is no tensor. Inputs sharing memory are one
    unit (their span's bytes), kept or replaced together; a fake (traced) input has no values to keep."""
    import torch

    from reprokit import compat

    units = [g["inputs"] for g in groups]
    grouped = {i for g in units for i in g}
    units += [[i] for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and i not in grouped]
    out: list = [None] * len(inputs)
    used = 0
    for unit in sorted(units):
        tensors = [inputs[i] for i in unit]
        size = aliases_bytes(unit, groups, metas)
        index = all(not (t.is_floating_point() or t.is_complex()) for t in tensors)
        if any(compat.is_fake(t) for t in tensors) or any(t.device.type == "meta" for t in tensors):
            how = "statistics"
        elif index and size <= caps.index_bytes or size <= caps.per_tensor and used + size <= caps.graph_cap():
            how, used = "values", used + size
        elif caps.on_disk and len(unit) == 1:
            how = "disk"
        else:
            how = "statistics"
        for i in unit:
            out[i] = how
    return out


def aliases_bytes(unit: list, groups: list, metas: list) -> int:
    """The bytes of memory a unit of inputs holds: a group's span, or the one input's."""
    for g in groups:
        if g["inputs"] == unit:
            elem = metas[unit[0]]["bytes"] // max(1, _numel(metas[unit[0]]["shape"]))
            return g["numel"] * elem
    return sum(metas[i].get("bytes", 0) for i in unit)


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def size_hint(s) -> int:
    """The value a symbolic size had in this call, read without a guard (int(s) would specialise the graph on it,
    and change the job's guards: a capture must not)."""
    node = getattr(s, "node", None)
    hint = getattr(node, "hint", None) if node is not None else None
    return int(hint) if hint is not None else int(s)


def save(inputs: list, how: list, groups: list, out_dir: str) -> None:
    """inputs.pt: the values kept in memory's way (None in place of the others); DISK/<i>.bin each streamed input."""
    import torch

    kept_groups = [g for g in groups if how[g["inputs"][0]] == "values"]
    chosen = [
        t if h == "values" or not isinstance(t, torch.Tensor) else None for t, h in zip(inputs, how)
    ]  # torch.save keeps the views the copies share
    copies = aliases.copied(chosen, lambda t: t.detach().clone(), kept_groups)
    buf = io.BytesIO()
    torch.save(
        [
            c.requires_grad_(t.requires_grad)
            if isinstance(c, torch.Tensor)
            else (size_hint(t) if isinstance(t, torch.SymInt) else c)
            for t, c in zip(inputs, copies)
        ],
        buf,
    )
    write_atomic(os.path.join(out_dir, "inputs.pt"), buf.getvalue())
    for i, (t, h) in enumerate(zip(inputs, how)):
        if h == "disk":
            os.makedirs(os.path.join(out_dir, DISK), exist_ok=True)
            ondisk.write(t, os.path.join(out_dir, DISK, f"{i}.bin"))


def load(case_dir: str, meta: dict, device=None) -> list:
    """The case's inputs: kept values as saved, streamed ones from disk, stand-ins for the rest, each on the device
    it was recorded on (`device` overrides); inputs that shared memory share it again."""
    import torch

    from reprokit.fx.inputs import synthetic_inputs

    metas, groups = meta["inputs"], meta.get("aliases") or []
    how = [m.get("kept") for m in metas]
    if all(h is None for h in how):  # a case written before inputs were kept one by one
        how = ["values" if meta.get("values_saved") else "statistics" if m["kind"] == "tensor" else None for m in metas]
    path = os.path.join(case_dir, "inputs.pt")
    saved = torch.load(path, weights_only=False) if os.path.exists(path) else [m.get("value") for m in metas]
    # stand-ins only where they are needed: a kept 1 GiB input gets no 1 GiB stand-in beside it
    made = synthetic_inputs([m if h == "statistics" else {"kind": "none"} for h, m in zip(how, metas)], device=device)
    out = []
    for i, (h, m) in enumerate(zip(how, metas)):
        if h == "values":
            out.append(saved[i] if device is None else saved[i].to(device))
        elif h == "disk":
            out.append(ondisk.read(os.path.join(case_dir, DISK, f"{i}.bin"), m, device))
        elif h == "statistics":
            out.append(made[i])
        else:
            out.append(saved[i] if i < len(saved) else m.get("value"))
    out = aliases.rebased(out, [g for g in groups if how[g["inputs"][0]] == "values"])
    return aliases.shared(out, [g for g in groups if how[g["inputs"][0]] != "values"])


def values_matter(gm, metas: list, how: list) -> list:
    """[(index, name, why)] of the replaced inputs whose exact values a failure may depend on: an index or mask
    (integer or bool), or a float input a comparison or branch reads directly."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    out = []
    for i, (m, h) in enumerate(zip(metas, how)):
        if h != "statistics" or i >= len(placeholders):
            continue
        node = placeholders[i]
        if m["dtype"] == "bool" or m["dtype"].startswith(("int", "uint")):
            out.append((i, node.name, f"an index or mask ({m['dtype']})"))
        elif any(_target_name(u) in _BRANCHING for u in node.users):
            out.append((i, node.name, "compared or branched on"))
    return out


def _target_name(node) -> str:
    t = node.target
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    return name.split(".")[0]


def summary(meta: dict) -> dict:
    """What capture.json and failure.json say of a case's inputs: kept, streamed to disk, replaced (by index)."""
    how = [m.get("kept") for m in meta.get("inputs", [])]
    return {
        "kept": [i for i, h in enumerate(how) if h == "values"],
        "on_disk": [i for i, h in enumerate(how) if h == "disk"],
        "replaced": [i for i, h in enumerate(how) if h == "statistics"],
        "values_matter": meta.get("values_matter") or [],
    }
