"""The exported program a failing AOTInductor compile was given, as plain data the parent can cut without torch:
one Python statement per node of its graph, with each value's shape and dtype (inputs of a cut are made from
them). Written to TRIAL_DIR/case/export_graph.json by a capture trial of the export ladder."""

from __future__ import annotations

import json
import os
from typing import Any


def describe_program(program) -> dict:
    """{"placeholders": [...], "nodes": [...], "outputs": [...]}; a node: name, code, uses, shape, dtype."""
    import torch.fx

    from reprokit import compat

    graph = program.graph_module.graph
    placeholders, nodes, outputs = [], [], []
    for n in graph.nodes:
        meta = value_meta(n.meta.get("val"))
        if n.op == "placeholder":
            placeholders.append({"name": n.name, **meta})
        elif n.op == "call_function":
            uses: list = []

            def name_of(a):
                uses.append(a.name)  # noqa: B023 (called at once, in the loop)
                return _Name(a.name)

            args = torch.fx.node.map_arg(n.args, name_of)
            kwargs = torch.fx.node.map_arg(n.kwargs, name_of)
            call = ", ".join([source(a) for a in args] + [f"{k}={source(v)}" for k, v in kwargs.items()])
            nodes.append(
                {
                    "name": n.name,
                    "code": f"{n.name} = {compat.op_qualname(n.target)}({call})",
                    "uses": sorted(set(uses)),
                    **meta,
                }
            )
        elif n.op == "output":
            torch.fx.node.map_arg(n.args, lambda a: outputs.append(a.name))
    return {"placeholders": placeholders, "nodes": nodes, "outputs": outputs}


class _Name(str):
    """A node's name inside map_arg's result: written as the bare name, not quoted."""


def source(value: Any) -> str:
    """Python source for an FX argument (names bare, devices and dtypes as torch.<...>)."""
    import torch

    if isinstance(value, _Name):
        return str(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(source(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    if isinstance(value, torch.device):
        return f"torch.device({str(value)!r})"
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return str(value)
    return repr(value)


def value_meta(val) -> dict:
    """Shape and dtype of a node's example value (sizes as their hints); {} for non-tensors."""
    import torch

    if not isinstance(val, torch.Tensor):
        return {}
    try:
        shape = [int(s) for s in val.shape]
    except Exception:  # an unbacked size has no hint: a cut there cannot be made an input
        return {}
    meta = {"shape": shape, "dtype": str(val.dtype)}
    if val.device.type != "cpu":  # a CUDA program: its cut inputs are made there too, or AOTI compiles for the CPU
        meta["device"] = val.device.type
    try:  # a non-contiguous example (a slice): the package may assume its strides (pytorch#153992)
        if not val.is_contiguous():
            meta["stride"] = [int(s) for s in val.stride()]
    except Exception:  # unbacked strides: made contiguous
        pass
    return meta


def write_case(program, trial_dir: str) -> str | None:
    """Save the program's description into TRIAL_DIR/case; its path, or None when it cannot be described."""
    try:
        data = describe_program(program)
    except Exception as e:  # a program that cannot be described is still bisected
        return f"export graph not captured: {type(e).__name__}: {e}"
    folder = os.path.join(trial_dir, "case")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "export_graph.json"), "w") as f:
        json.dump(data, f, indent=1)
    return None
