"""The first diverging node of a graph: the graph cut after one node (a prefix ending there), compiled, and that
node's value compared with eager's.

Why prefixes, not every intermediate made an output at once: an output is written to memory in its own dtype,
which rounds exactly where a fused kernel keeps float32 (an FP8 scale's bfloat16 division), and would hide the
difference being looked for. A prefix ends at the node asked, as the whole graph ends at its outputs. The prefixes
are bisected over the ancestors of the diverging output, in graph order: about log2(n) compiles for n nodes. That
finds a node that diverges where the one before it agrees; a difference that appears, vanishes and appears again
is named at one of its starts. Written to the trial folder as divergence.json.
"""

from __future__ import annotations

import os

from reprokit.child.state import TrialState

TOL = 1e-3  # the accuracy check's tolerance (child/accuracy.TOL), here without float64's excuse
LEVELS = ("tolerance", "rounding")  # beyond TOL; else beyond rounding (64 ulp), for a check as strict as torch.equal


def run_divergence(state: TrialState) -> None:
    """Find the first node of the case's graph whose compiled value differs from eager; write divergence.json."""
    import torch

    from reprokit.child.backends import backend_for
    from reprokit.child.graph import compile_graph, in_context, run_prelude
    from reprokit.data.rundir import write_json_atomic
    from reprokit.fx.capture import node_values
    from reprokit.fx.materialize import build, load_case

    spec = state.spec
    assert spec.case is not None  # a divergence trial names its case folder
    state.compiled = True
    run_prelude(spec.case)
    gm, inputs, meta = load_case(spec.case)
    for line in meta.get("config_lines", []):
        exec(line, {"torch": torch})
    ctx = meta.get("context")
    backend = backend_for(spec.stage, meta.get("compile_args") or {}, spec.config)
    dynamic = True if any(m.get("symbolic") for m in meta.get("inputs", [])) else None
    with torch.no_grad():
        eager = in_context(lambda *a: node_values(gm, a), ctx)(*_copies(inputs))
    seen: dict = {}

    def compiled_value(name: str):
        if name not in seen:
            edit = {"computed": sorted(ancestors(gm, name)), "cut": [], "outputs": [name]}
            sub, sub_inputs = build(gm, inputs, edit)
            with torch.no_grad():
                out = in_context(compile_graph(sub, sub_inputs, backend, dynamic), ctx)(*_copies(sub_inputs))
            seen[name] = out[0] if isinstance(out, (list, tuple)) else out
        return seen[name]

    found = first_diverging(gm, eager, compiled_value)
    found["compiles"] = len(seen)
    write_json_atomic(os.path.join(state.dir, "divergence.json"), found)


def _copies(args) -> list:
    from reprokit.child.accuracy import copies

    return copies(args)


def ancestors(gm, name: str) -> set:
    """The names of the nodes `name` is computed from, itself included, placeholders left out."""
    nodes = {n.name: n for n in gm.graph.nodes}
    out, todo = set(), [nodes[name]]
    while todo:
        n = todo.pop()
        if n.name in out or n.op == "placeholder":
            continue
        out.add(n.name)
        todo.extend(n.all_input_nodes)
    return out


def first_diverging(gm, eager: dict, compiled_value) -> dict:
    """{"node", "target", "code", "index", "of", "level", "max_abs", "eager", "compiled"} of the first node that
    diverges, or {"node": None, "why"} when no output of the graph does."""
    import torch

    outputs = [n for n in _output_names(gm) if isinstance(eager.get(n), torch.Tensor)]
    for level in LEVELS:
        diverging = next((o for o in outputs if differs(eager[o], compiled_value(o), level)), None)
        if diverging is not None:
            break
    else:
        return {
            "node": None,
            "why": f"no output of the graph differs from eager beyond rounding ({len(outputs)} asked)",
        }
    inside = ancestors(gm, diverging)
    order = [
        n.name
        for n in gm.graph.nodes
        if n.name in inside and n.op != "get_attr" and isinstance(eager.get(n.name), torch.Tensor)
    ]
    lo, hi = -1, order.index(diverging)  # order[hi] diverges; everything up to lo agrees (none, at first)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if differs(eager[order[mid]], compiled_value(order[mid]), level):
            hi = mid
        else:
            lo = mid
    name = order[hi]
    node = next(n for n in gm.graph.nodes if n.name == name)
    return {
        "node": name,
        "target": target_name(node),
        "code": node.format_node(),
        # What it is computed from: an op fused into its kernel is computed there, not as an output of its own
        "feeds": [target_name(a) for a in node.all_input_nodes if a.op not in ("placeholder", "get_attr")],
        "index": hi + 1,
        "of": len(order),
        "level": level,
        **numbers(eager[name], compiled_value(name)),
    }


def _output_names(gm) -> list:
    import torch

    out = next(n for n in gm.graph.nodes if n.op == "output")
    names: list = []
    torch.fx.node.map_arg(out.args, lambda a: names.append(a.name))
    return names


def differs(r, o, level: str) -> bool:
    """Whether compiled's value o differs from eager's r: beyond torch's tolerance (TOL, no float64 reference), or
    beyond rounding (64 ulp of its magnitude). Another dtype or shape differs; integers must be equal."""
    import torch

    from reprokit.child.tensor_numbers import float_numbers

    if not isinstance(o, torch.Tensor) or r.dtype != o.dtype or r.shape != o.shape:
        return True
    if not (r.is_floating_point() or r.is_complex()):
        return bool((r != o).any())
    if level == "tolerance":
        return not torch.allclose(r, o, atol=TOL, rtol=TOL, equal_nan=True)  # torch's `same` without float64
    nums = float_numbers(r, o, None)
    return nums["max_abs"] > nums["noise_floor"]


def numbers(r, o) -> dict:
    """The largest difference there, and eager's and compiled's values at it (floats only)."""
    import torch

    from reprokit.child.tensor_numbers import float_numbers

    if not isinstance(o, torch.Tensor) or not r.is_floating_point() or r.shape != o.shape or r.dtype != o.dtype:
        return {}
    nums = float_numbers(r, o, None)
    w = nums.get("worst") or {}
    return {"max_abs": nums["max_abs"], "eager": w.get("eager"), "compiled": w.get("compiled")}


def target_name(node) -> str:
    """What a node calls, short: an operator's dotted name, a method's or a submodule's."""
    from reprokit import compat

    if node.op == "call_function":
        return compat.op_qualname(node.target).removeprefix("torch.ops.")
    return str(node.target)
