"""The inputs part of repro.py: one named variable per graph input (synthetic, or the real values inline), and the
argument lists its harness passes: the inputs themselves to the compiled graph, copies to eager and float64 ones."""
from __future__ import annotations

import builtins
import re

from reprokit.fx.inputs import synthetic_expr

# Names repro.py's own lines use: an input named so gets a trailing underscore instead of shadowing them.
TEMPLATE_NAMES = {"torch", "os", "copy", "Repro", "model", "compiled", "out", "grads", "saved", "attributes",
                  "expected", "actual", "reference", "results", "error", "name", "self"}


def input_parts(parts: dict, inline: bool, backward: bool) -> dict:
    """{"names", "inputs" [(name, expression)], "attribute_lines", "args", "copies", "copies64"} for the template."""
    metas = parts["inputs"]
    names = variable_names(parts.get("input_names") or [f"x{i}" for i in range(len(metas))], parts)
    exprs = parts["inline"]["inputs"] if inline else [synthetic_expr(m, default_dtype(parts)) for m in metas]
    attribute_metas = parts.get("attribute_meta") or {}
    attributes = [(name, parts["inline"]["attributes"][name] if inline else
                   synthetic_expr(attribute_metas[name], default_dtype(parts)) if name in attribute_metas else "None")
                  for name in parts["attributes"]]
    return {"names": names, "inputs": list(zip(names, exprs)), "attribute_lines": attributes,
            "args": ", ".join(names), "copies": [copy_expr(n, m, None, backward) for n, m in zip(names, metas)],
            "copies64": [copy_expr(n, m, "double", backward) for n, m in zip(names, metas)],
            "model": "Repro(attributes)" if parts["attributes"] else "Repro()"}


def default_dtype(parts: dict) -> str:
    """The dtype torch.randn makes where the repro runs (the script's own default, replayed first)."""
    return ((parts.get("context") or {}).get("default_dtype")) or "float32"


def variable_names(names: list, parts: dict) -> list:
    """The placeholders' names as repro.py's variables, none shadowing a name its other lines use."""
    taken = TEMPLATE_NAMES | set(dir(builtins)) | set(re.findall(r"(?:import|as) (\w+)", parts.get("imports") or ""))
    taken |= {sub["cls"] for sub in parts.get("submodules") or []}
    out = []
    for name in names:
        while name in taken or name in out:
            name += "_"
        out.append(name)
    return out


def copy_expr(name: str, meta: dict, cast, backward: bool) -> str:
    """A fresh copy of one input for a reference run (a graph may write to its inputs): floating point ones in
    float64 for the float64 run (cast="double"); leaves again where the backward needs their gradients."""
    if meta.get("kind") != "tensor":
        return name
    dtype = meta.get("dtype", "")
    floating = cast and dtype.startswith(("float", "bfloat"))
    if backward and meta.get("requires_grad"):
        return f"{name}.detach().{'double' if floating else 'clone'}().requires_grad_()"
    return f"{name}.double()" if floating else f"{name}.clone()"
