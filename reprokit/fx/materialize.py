"""Turn a captured case plus an edit into a runnable GraphModule and its inputs, and the parts repro.py needs
(trial child only; running the case is reprokit.child.graph)."""

from __future__ import annotations

import json
import os

import torch
import torch.fx

from reprokit.fx import aliases
from reprokit.fx.inputs import inline_exprs
from reprokit.fx.random_ops import draws_random


def load_case(case_dir: str, device=None):
    """(GraphModule, inputs, meta) of a captured case folder, each input on the device it was recorded on (`device`
    overrides): real values where they were kept, stand-ins matched on their statistics where not (fx/keep)."""
    with open(os.path.join(case_dir, "meta.json")) as f:
        meta = json.load(f)
    from reprokit.fx import keep, serialize

    gm = serialize.load(os.path.join(case_dir, "graph.pt"))
    return gm, keep.load(case_dir, meta, device), meta


def build(gm: torch.fx.GraphModule, inputs: list, edit: dict | None, cut_values: dict | None = None):
    """The edited GraphModule and its inputs; cut nodes become inputs holding their eager value (detached copies,
    or with `cut_values` those very values, autograd history kept, as a graph spliced into a run needs)."""
    if edit is None:
        return gm, list(inputs)
    from reprokit.fx.capture import node_values

    computed, cut, outputs = set(edit["computed"]), set(edit["cut"]), list(edit["outputs"])
    # With the real inputs (grad kept) a cut node's value knows whether it required grad.
    # On copies: a graph that writes to its inputs would otherwise run on inputs the eager run already changed.
    values = (
        cut_values
        if cut_values is not None
        else node_values(gm, aliases.copied(list(inputs), lambda t: t.detach().clone().requires_grad_(t.requires_grad)))
        if cut
        else {}
    )
    needed = set(outputs)
    for n in gm.graph.nodes:
        if n.name in computed:
            needed.update(a.name for a in n.all_input_nodes)
    graph = torch.fx.Graph()
    remap, new_inputs = {}, []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for n in gm.graph.nodes:
        if n.name not in needed or n.name in computed:
            continue
        if n.op == "placeholder":
            remap[n] = graph.placeholder(n.name, type_expr=n.type)
            new_inputs.append(inputs[placeholders.index(n)])
        elif n.name in cut:
            remap[n] = graph.placeholder(n.name)
            new_inputs.append(values[n.name] if cut_values is not None else _detached(values[n.name]))
    for n in gm.graph.nodes:
        if n.name in computed:
            remap[n] = graph.node_copy(n, lambda a: remap[a])
    by_name = {n.name: n for n in gm.graph.nodes}
    graph.output(tuple(remap[by_name[o]] for o in outputs))
    new_gm = torch.fx.GraphModule(gm, graph)
    return new_gm, new_inputs


def _detached(value):
    if not isinstance(value, torch.Tensor):
        return value
    v = value.detach().clone()
    return v.requires_grad_(bool(value.requires_grad) and v.is_floating_point())


def has_higher_order_ops(gm) -> bool:
    """Whether the graph calls a higher-order op (an autograd.Function's or a control-flow body)."""
    from reprokit import compat

    return any(n.op == "call_function" and compat.is_higher_order_op(n.target) for n in gm.graph.nodes)


def repro_parts(case_dir: str, edit: dict | None, out_dir: str) -> dict:
    """What repro.py needs, as plain data: forward() source, imports, inputs, the user's config lines."""
    from reprokit import compat
    from reprokit.fx.capture import tensor_meta

    gm, inputs, meta = load_case(case_dir)
    gm, inputs = build(gm, inputs, edit)
    # Inputs that share memory saved as one new span each (a cut may have dropped the one at its start), so that
    # each one's storage offset is its offset in the group repro.py is written from.
    inputs = [
        c.requires_grad_(t.requires_grad)
        if isinstance(t, torch.Tensor) and not c.requires_grad and t.requires_grad
        else c
        for t, c in zip(inputs, aliases.copied(inputs, lambda t: t.detach().clone()))
    ]
    src, globals_ = graph_python_code(gm)
    submodules, children = _submodule_classes(gm)
    attrs = sorted(
        {
            n.target
            for n in gm.graph.nodes
            if n.op == "get_attr" and not isinstance(_fetch_attr(gm, n.target), torch.nn.Module)
        }
    )
    state = {name: _fetch_attr(gm, name).detach().clone() for name in attrs}
    torch.save({"inputs": inputs, "attributes": state}, os.path.join(out_dir, "repro_inputs.pt"))
    input_metas = [tensor_meta(t) for t in inputs]
    attribute_metas = {name: tensor_meta(value) for name, value in state.items()}
    all_src = src + "".join(m["forward"] for m in submodules)
    return {
        "forward": _tidy(src),
        "submodules": submodules,
        "children": children,
        "graph_kind": (meta.get("compile_args") or {}).get("graph", "forward"),
        "direct": has_higher_order_ops(gm),
        "imports": _used_imports(format_import_block(globals_), all_src),
        "inputs": input_metas,
        "aliases": aliases.describe(inputs),
        "attribute_meta": attribute_metas,
        "inline": inline_exprs(inputs, input_metas, state, attribute_metas),
        "input_bytes": sum(m.get("bytes", 0) for m in input_metas + list(attribute_metas.values())),
        "input_names": [n.name for n in gm.graph.nodes if n.op == "placeholder"],
        "attributes": attrs,
        "call_modules": sorted({str(n.target) for n in gm.graph.nodes if n.op == "call_module"}),
        "config_lines": meta.get("config_lines", []),
        "prelude": _read_text(os.path.join(case_dir, "prelude.py")),
        "hook_lines": meta.get("hook_lines", []),
        "context": meta.get("context"),
        "dynamic": any(m.get("symbolic") for m in meta.get("inputs", [])),
        "compile_args": meta.get("compile_args"),
        "nodes": len(gm.graph.nodes),
        "torch_version": compat.TORCH_VERSION,
        "float64_error": float64_error(gm, inputs),
        "random": draws_random(gm),
    }


def float64_error(gm, inputs) -> str | None:
    """Why float64 cannot be repro.py's reference (the module and its floating point inputs cast with .double()):
    the graph cannot run in float64, or float64 and eager land on opposite sides of zero (across_zero); None when it
    can be: the repro then needs no fall-back for it."""
    import copy

    def fresh(cast):
        return aliases.copied(
            list(inputs),
            lambda t: t.detach().to(torch.float64, copy=True) if cast and t.is_floating_point() else t.detach().clone(),
        )

    try:
        fp64 = copy.deepcopy(gm).double()(*fresh(True))
    except Exception as e:  # any failure: the reference is left out, as repro.py's older fall-back did
        return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    try:
        eager = copy.deepcopy(gm)(*fresh(False))
    except Exception:
        return None
    for i, (a, f) in enumerate(zip(eager, fp64)):
        if (
            isinstance(a, torch.Tensor)
            and a.is_floating_point()
            and isinstance(f, torch.Tensor)
            and a.shape == f.shape
            and bool(across_zero(a, f).any())
        ):
            j = int(across_zero(a, f).flatten().nonzero()[0])
            return (
                f"float64 lands across zero from eager: output {i} eager {float(a.flatten()[j]):.9g}, float64 "
                f"{float(f.flatten()[j]):.9g}, a choice (a signed zero, a branch cut) rounding cannot explain"
            )
    return None


def across_zero(eager, fp64):
    """Where eager and float64 have opposite signs at a like magnitude (within a factor of 2) beyond rounding: the
    two made a different choice (atan2 of -0.0 and of +0.0; a branch cut), not a different rounding, and float64
    cannot say whether compiled, siding with it, is the more accurate."""
    e, f = eager.detach().double(), fp64.detach().double()
    floor = 64 * torch.finfo(eager.dtype).eps * float(f.abs().nan_to_num(0, 0, 0).max())
    ratio = e.abs() / f.abs().clamp_min(torch.finfo(torch.float64).tiny)
    return (e * f < 0) & (f.abs() > floor) & (ratio >= 0.5) & (ratio <= 2)


def _read_text(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().rstrip("\n")
    except OSError:
        return None


def graph_python_code(gm):
    """(source of forward(), globals it needs) as FX would generate them."""
    pc = gm.graph.python_code(root_module="self")
    return pc.src, pc.globals


def _tidy(src: str) -> str:
    return "\n".join(line.rstrip() for line in src.strip("\n").splitlines())


def _submodule_classes(gm, prefix: str = "") -> tuple[list, list]:
    """(classes innermost first, this module's children) for GraphModule attributes (higher-order op bodies)."""

    classes, children = [], []
    for n in gm.graph.nodes:
        if n.op != "get_attr":
            continue
        sub = _fetch_attr(gm, n.target)
        if isinstance(sub, torch.fx.GraphModule):
            name = (prefix + n.target).replace(".", "_")
            inner, grandchildren = _submodule_classes(sub, name + "_")
            cls = "".join(p.capitalize() for p in name.split("_") if p)
            classes += inner + [{"cls": cls, "children": grandchildren, "forward": _tidy(graph_python_code(sub)[0])}]
            children.append({"attr": n.target, "cls": cls})
    return classes, children


def _fetch_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _used_imports(block: str, src: str) -> str:
    """Only the import lines whose bound name forward() uses (FX emits a fixed preamble)."""
    import re

    keep = []
    for line in block.splitlines():
        line = line.strip()
        m = re.match(r"(?:from \S+ )?import (\S+)(?: as (\S+))?$", line) or re.match(r"(\w+) = ", line)
        name = (
            (m.group(2) or m.group(1))
            if m and m.lastindex and m.lastindex >= 2 and m.group(2)
            else (m.group(1) if m else None)
        )
        if name and name != "torch" and re.search(rf"\b{re.escape(name.split('.')[0])}\b", src):
            keep.append(line)
    return "\n".join(keep)


def format_import_block(globals_: dict) -> str:
    """Import lines for the globals an FX-generated forward() refers to (moved out of compat.py: no torch._ name)."""
    from torch.fx.graph_module import _format_import_block
    from torch.package import sys_importer

    return _format_import_block(globals_, sys_importer)
