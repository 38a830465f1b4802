"""Save a graph as Dynamo hands it to a backend: code, pickled GraphModule, input metadata and values.

Runs in the trial child. The graph is the one *before* any backend rewrites it (no pattern matcher
has fused anything yet), so a repro cut from it holds only ops the user's code produced.
"""

from __future__ import annotations

import io
import os
from typing import Any

import torch
import torch.fx

from reprokit.data.rundir import write_atomic, write_json_atomic
from reprokit.data.stages import INDUCED_BY_REPROKIT
from reprokit.fx import aliases, serialize
from reprokit.fx.inputs import synthetic_inputs, value_stats


def tensor_meta(t, stats_max_bytes: int | None = None) -> dict:
    """Shape, stride, dtype, device, requires_grad and value statistics of one input (none for an input over
    stats_max_bytes)."""
    if isinstance(t, torch.SymInt) or isinstance(t, int) and not isinstance(t, bool):
        # A size Dynamo made symbolic (a recompile with automatic dynamic shapes, or dynamic=True): the graph
        # was compiled for any size, and is replayed so.
        from reprokit import compat

        return {"kind": "int", "value": compat.size_hint(t), "symbolic": isinstance(t, torch.SymInt)}
    if isinstance(t, (float, bool)):
        return {"kind": type(t).__name__, "value": t}
    if not isinstance(t, torch.Tensor):
        return {"kind": "other", "repr": repr(t)[:200]}
    from reprokit import compat

    fake = compat.is_fake(t)
    meta: dict[str, Any] = {
        "kind": "tensor",
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "dtype": str(t.dtype).replace("torch.", ""),
        "device": str(t.device),
        "requires_grad": bool(t.requires_grad),
        "bytes": t.numel() * t.element_size(),
        "contiguous": t.is_contiguous(),
    }
    if fake or stats_max_bytes is not None and meta["bytes"] > stats_max_bytes:
        return meta  # a traced (fake) tensor has metadata but no values
    with torch.no_grad():
        meta.update(value_stats(t))  # what synthetic inputs are matched on: no values
    return meta


def node_values(gm: torch.fx.GraphModule, inputs) -> dict:
    """Eager value of every node (by name), by running the graph once through an Interpreter."""
    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            values[n.name] = out
            return out

    Recorder(gm).run(*inputs)
    return values


def traced_values(gm: torch.fx.GraphModule) -> dict:
    """Each node's value as Dynamo traced it (a fake tensor for a tensor), by name, where it kept one."""
    return {n.name: n.meta["example_value"] for n in gm.graph.nodes if "example_value" in n.meta}


# Python's in-place operators as Dynamo records them (x += y is operator.iadd; x[i] = y is operator.setitem)
_INPLACE_OPERATORS = {
    "iadd",
    "isub",
    "imul",
    "itruediv",
    "ifloordiv",
    "imod",
    "ipow",
    "iand",
    "ior",
    "ixor",
    "ilshift",
    "irshift",
    "imatmul",
    "setitem",
}


def mutates(n: torch.fx.Node) -> bool:
    """Whether the node has an effect beyond its result: it writes into one of its inputs (an in-place method or
    op, a mutating schema) or changes state, as entering and leaving an autocast region does (FX's is_impure)."""
    if n.op == "call_function" and n.is_impure():
        return True
    if n.op in ("call_function", "call_method", "call_module") and not n.users:
        # Dynamo removes dead code before it hands a graph over: a call nothing reads is there for its effect,
        # whether or not FX knows it (torch 2.13's is_impure misses functorch's _vmap_increment_nesting and
        # _set_fwd_grad_enabled, and dropping them broke every cut of a jacfwd graph, #194706).
        return True
    t = n.target
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    if (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_OPERATORS:
        return True
    schema = getattr(t, "_schema", None)
    return bool(getattr(schema, "is_mutable", False))


def describe_nodes(gm: torch.fx.GraphModule, values: dict) -> tuple[list, list]:
    nodes, outputs = [], []
    for n in gm.graph.nodes:
        if n.op == "output":
            flat = n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],)
            outputs = [a.name for a in flat if isinstance(a, torch.fx.Node)]
            continue
        deps = [a.name for a in n.all_input_nodes]
        target = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
        nodes.append(
            {
                "name": n.name,
                "op": n.op,
                "target": str(target),
                "deps": deps,
                "tensor": isinstance(values.get(n.name), torch.Tensor),
                "mutates": mutates(n),
            }
        )
    return nodes, outputs


def config_assignment_lines() -> list[str]:
    """Python lines that recreate the user's non-default compiler config (for repro.py)."""
    from reprokit import compat

    return [
        f"{name} = {value!r}"
        for name, value in sorted(compat.non_default_configs().items())
        if name not in INDUCED_BY_REPROKIT
    ]


# Namespaces of ops torch itself defines; any other namespace in a graph is an op the script registered.
BUILTIN_NAMESPACES = {
    "aten",
    "prims",
    "prim",
    "higher_order",
    "_c10d_functional",
    "c10d_functional",
    "c10d",
    "quantized",
    "_quantized",
    "profiler",
    "rngprims",
    "mkldnn",
    "onednn",
    "inductor",
    "debugprims",
    "_quantized_decomposed",
    "quantized_decomposed",
    "_dtensor",
    "symm_mem",
}


def config_hooks() -> tuple[list, list]:
    """(lines, names): assignments of the compiler hooks (custom passes) the script installed, by the name the
    script gave them, and those names. Hooks not defined by the script itself (lambdas, torch's own) are left out."""
    from reprokit import compat

    lines, names = [], []
    for key, value in sorted(compat.non_default_configs(objects=True).items()):
        if value is None or isinstance(value, (bool, int, float, str, list, tuple)):
            continue
        if isinstance(value, type) or not getattr(value, "__name__", "<").isidentifier():
            owner = type(value)
            if owner.__module__ != "__main__":
                continue
            expr, name = f"{owner.__name__}()", owner.__name__
        elif getattr(value, "__module__", None) == "__main__":
            expr = name = value.__name__
        else:
            continue
        lines.append(f"{key} = {expr}")
        names.append(name)
    return lines, names


def op_namespaces(gm) -> list:
    """Namespaces of the non-builtin ops (torch.ops.<ns>.*) the graph calls: ops the script registered."""
    from reprokit import compat

    found = set()
    for n in gm.graph.nodes:
        if n.op == "call_function":
            parts = compat.op_qualname(n.target).split(".")
            if parts[:2] == ["torch", "ops"] and len(parts) > 2 and parts[2] not in BUILTIN_NAMESPACES:
                found.add(parts[2])
    return sorted(found)


def script_prelude(script: str | None, gm, hook_names: list) -> str | None:
    """The statements of the script the graph needs elsewhere (custom ops it calls, hooks), or None."""
    from reprokit.fx.prelude import prelude_for

    if not script:
        return None
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            source = f.read()
    except OSError:
        return None
    return prelude_for(source, hook_names=hook_names, op_namespaces=op_namespaces(gm))


def symbolic_placeholders(gm) -> list:
    """Per placeholder: whether Dynamo traced it with a symbolic size (a SymInt, or a tensor of symbolic shape)."""
    out = []
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("example_value")
        shape = getattr(v, "shape", ())
        out.append(isinstance(v, torch.SymInt) or any(isinstance(d, torch.SymInt) for d in shape))
    return out


def save_inputs(inputs: list, inputs_meta: list, out_dir: str, max_input_bytes: int, groups: list) -> tuple[bool, str]:
    """(whether the real values were saved to inputs.pt, a note for the report when they were not)."""
    from reprokit import compat

    total = sum(m.get("bytes", 0) for m in inputs_meta)
    if any(compat.is_fake(t) for t in inputs if isinstance(t, torch.Tensor)):
        return False, (
            "traced inputs (a backward graph as AOT autograd hands it to inductor, or a bucket's graph as DDP's "
            "optimizer compiles it): input values are synthetic (shape and dtype kept)"
        )
    if total > max_input_bytes:
        return False, (
            f"graph inputs are {total / 2**20:.1f} MiB, over the {max_input_bytes / 2**20:.0f} MiB "
            "budget: values were not saved; trials use synthetic values matched on shape, dtype and "
            "statistics"
        )
    buf = io.BytesIO()
    kept = aliases.copied(inputs, lambda t: t.detach().clone(), groups)  # torch.save keeps the views the copies share
    torch.save(
        [
            c.requires_grad_(t.requires_grad)
            if isinstance(t, torch.Tensor)
            else (compat.size_hint(t) if isinstance(t, torch.SymInt) else t)
            for t, c in zip(inputs, kept)
        ],
        buf,
    )
    write_atomic(os.path.join(out_dir, "inputs.pt"), buf.getvalue())
    return True, ""


def capture_graph(
    gm,
    example_inputs,
    out_dir: str,
    max_input_bytes: int,
    compile_args=None,
    script=None,
    context=None,
    run_eagerly: bool = True,
    stats_max_bytes: int | None = None,
) -> str:
    """Write the case folder; returns a note for the report (e.g. that input values were synthesised).

    script: the user's script, whose custom-op registrations and hooks the graph needs go into prelude.py;
    context: the call-time state (child.context.capture) the graph ran under; run_eagerly=False: which nodes are
    tensors is read from Dynamo's own example values instead of running the graph once (the capture's copy of
    every graph, written before it compiles, in case the process dies in it); stats_max_bytes: no value statistics
    of a larger input."""
    from reprokit import compat

    os.makedirs(out_dir, exist_ok=True)
    inputs = list(example_inputs)
    inputs_meta = [
        dict(tensor_meta(t, stats_max_bytes), **({"symbolic": True} if sym else {}))
        for t, sym in zip(inputs, symbolic_placeholders(gm) + [False] * len(inputs))
    ]
    groups = aliases.describe(inputs)  # inputs that share memory
    saved_values, note = save_inputs(inputs, inputs_meta, out_dir, max_input_bytes, groups)
    examples = {} if run_eagerly else traced_values(gm)  # the reloaded graph's nodes keep no example values
    write_atomic(os.path.join(out_dir, "graph.pt"), serialize.save(gm))
    # Describe exactly the graph that trials will load.
    gm = serialize.load(os.path.join(out_dir, "graph.pt"))
    write_atomic(os.path.join(out_dir, "graph.py"), gm.code)
    values, failure = (
        eager_node_values(gm, inputs, inputs_meta, groups, saved_values) if run_eagerly else (examples, "")
    )
    note = "; ".join(part for part in (note, failure) if part)
    nodes, outputs = describe_nodes(gm, values)
    hook_lines, hook_names = config_hooks()
    prelude = write_prelude(out_dir, script, gm, hook_names)
    write_json_atomic(
        os.path.join(out_dir, "meta.json"),
        {
            "context": context,
            "prelude": bool(prelude),
            "hook_lines": hook_lines,
            "nodes": nodes,
            "outputs": outputs,
            "inputs": inputs_meta,
            "values_saved": saved_values,
            "aliases": groups,
            "input_names": [n.name for n in gm.graph.nodes if n.op == "placeholder"],
            "config_lines": config_assignment_lines(),
            "compile_args": compile_args,
            "torch_version": compat.TORCH_VERSION,
            "note": note,
            "node_count": len(gm.graph.nodes),
        },
    )
    return note


def eager_node_values(gm, inputs, inputs_meta, groups, saved_values) -> tuple:
    """(values, failure): every node's value from one eager run of the graph on copies of the inputs (synthetic
    ones when their values were not saved); ({}, why) when the graph cannot run eagerly."""
    # Copies: a graph that writes to its inputs must not write to the running job's tensors a second time.
    probe_inputs = (
        aliases.copied(inputs, lambda t: t.detach().clone(), groups)
        if saved_values
        else aliases.shared(synthetic_inputs(inputs_meta), groups)
    )
    try:
        with torch.no_grad():
            return node_values(gm, [t.detach() if isinstance(t, torch.Tensor) else t for t in probe_inputs]), ""
    except Exception as e:  # a graph that cannot run eagerly can still be compiled; nothing can be cut
        return {}, f"graph does not run eagerly ({type(e).__name__}); no node can be cut"


def write_prelude(out_dir: str, script, gm, hook_names) -> str:
    """prelude.py: the fake process group the graph's collectives need, then the script's registrations and
    hooks; nothing written (and "" returned) when the graph needs neither."""
    from reprokit.fx.collectives import fake_group_prelude

    prelude = script_prelude(script, gm, hook_names)
    prelude = "\n".join(p for p in (fake_group_prelude(gm), prelude) if p)  # the group first: ops may need it
    if prelude:
        write_atomic(os.path.join(out_dir, "prelude.py"), prelude)
    return prelude
