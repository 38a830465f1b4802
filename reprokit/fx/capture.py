"""Save a graph as Dynamo hands it to a backend: code, pickled GraphModule, input metadata and values.

Runs in the trial child. The graph is the one *before* any backend rewrites it (no pattern matcher
has fused anything yet), so a repro cut from it holds only ops the user's code produced.
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.fx

from reprokit.data.rundir import write_atomic, write_json_atomic
from reprokit.data.stages import INDUCED_BY_REPROKIT
from reprokit.fx import aliases, keep, serialize
from reprokit.fx.inputs import synthetic_inputs, value_stats


def tensor_meta(t, stats_max_bytes: int | None = None) -> dict:
    """Shape, stride, dtype, device, requires_grad and value statistics of one input (none for an input over
    stats_max_bytes)."""
    if isinstance(t, torch.SymInt) or isinstance(t, int) and not isinstance(t, bool):
        # A size Dynamo made symbolic (a recompile with automatic dynamic shapes, or dynamic=True): the graph
        # was compiled for any size, and is replayed so.
        return {"kind": "int", "value": keep.size_hint(t), "symbolic": isinstance(t, torch.SymInt)}
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
    if fake or t.device.type == "meta" or stats_max_bytes is not None and meta["bytes"] > stats_max_bytes:
        return meta  # a traced (fake) tensor, or one on the meta device, has metadata but no values
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
    from reprokit import torch_config

    return [
        f"{name} = {value!r}"
        for name, value in sorted(torch_config.non_default_configs().items())
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
    from reprokit import torch_config

    lines, names = [], []
    for key, value in sorted(torch_config.non_default_configs(objects=True).items()):
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


def save_inputs(inputs: list, inputs_meta: list, out_dir: str, caps: keep.Caps, groups: list) -> tuple[bool, str]:
    """(whether every tensor's real values were kept, a note for the report naming the inputs replaced by stand-ins);
    each input's meta says how it was kept (fx/keep)."""
    from reprokit import compat

    if any(compat.is_fake(t) for t in inputs if isinstance(t, torch.Tensor)):
        for m in inputs_meta:
            m.update({"kept": "statistics"} if m["kind"] == "tensor" else {})
        return False, (
            "traced inputs (a backward graph as AOT autograd hands it to inductor, or a bucket's graph as DDP's "
            "optimizer compiles it): input values are synthetic (shape and dtype kept)"
        )
    how = keep.plan(inputs, inputs_meta, groups, caps)
    for m, h in zip(inputs_meta, how):
        if h is not None:
            m["kept"] = h
    keep.save(inputs, how, groups, out_dir)
    replaced = [i for i, h in enumerate(how) if h == "statistics"]
    disk = [i for i, h in enumerate(how) if h == "disk"]
    parts = []
    if replaced:
        mib = sum(inputs_meta[i]["bytes"] for i in replaced) / 2**20
        devices = ", ".join(sorted({inputs_meta[i]["device"] for i in replaced}))
        parts.append(
            f"inputs {', '.join(map(str, replaced))} ({mib:.1f} MiB) were not saved (caps: {caps.per_tensor / 2**20:g} "
            f"MiB a tensor, {caps.graph_cap() / 2**20:g} MiB a graph); trials use stand-ins made on their recorded "
            f"device ({devices}) and matched on shape, stride, dtype and statistics"
        )
    if disk:
        parts.append(f"inputs {', '.join(map(str, disk))} over the caps were streamed to disk ({keep.DISK}/)")
    return not replaced and not disk, "; ".join(parts)


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
    process_group: dict | None = None,
    caps: keep.Caps | None = None,
) -> str:
    """Write the case folder; returns a note for the report (e.g. that input values were synthesised).
    script: the user's script, whose custom-op registrations and hooks the graph needs go into prelude.py;
    context: the call-time state (child.context.capture) the graph ran under; run_eagerly=False: which nodes are
    tensors is read from Dynamo's own example values instead of running the graph once (the capture's copy of
    every graph, written before it compiles, in case the process dies in it); stats_max_bytes: no value statistics
    of a larger input; process_group: the job's, as recorded, where it may be gone by now (fx/collectives); caps:
    what is kept of the inputs (fx/keep; by default max_input_bytes a tensor)."""
    from reprokit import compat

    os.makedirs(out_dir, exist_ok=True)
    inputs = list(example_inputs)
    inputs_meta = inputs_metas(gm, inputs, stats_max_bytes)
    groups = aliases.describe(inputs)  # inputs that share memory
    caps = caps or keep.Caps(max_input_bytes)
    saved_values, note = save_inputs(inputs, inputs_meta, out_dir, caps, groups)
    examples = {} if run_eagerly else traced_values(gm)  # the reloaded graph's nodes keep no example values
    write_atomic(os.path.join(out_dir, "graph.pt"), serialize.save(gm))
    # Describe exactly the graph that trials will load.
    gm = serialize.load(os.path.join(out_dir, "graph.pt"))
    write_atomic(os.path.join(out_dir, "graph.py"), gm.code)
    values, failure = eager_node_values(gm, inputs, inputs_meta, groups) if run_eagerly else (examples, "")
    note = "; ".join(part for part in (note, failure) if part)
    nodes, outputs = describe_nodes(gm, values)
    hook_lines, hook_names = config_hooks()
    prelude = write_prelude(out_dir, script, gm, hook_names, process_group)
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
            "values_matter": keep.values_matter(gm, inputs_meta, [m.get("kept") for m in inputs_meta]),
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


def inputs_metas(gm, inputs: list, stats_max_bytes: int | None) -> list:
    """tensor_meta of each input, marked where Dynamo traced it with a symbolic size."""
    return [
        dict(tensor_meta(t, stats_max_bytes), **({"symbolic": True} if sym else {}))
        for t, sym in zip(inputs, symbolic_placeholders(gm) + [False] * len(inputs))
    ]


def eager_node_values(gm, inputs, inputs_meta, groups) -> tuple:
    """(values, failure): every node's value from one eager run of the graph on copies of the inputs kept (stand-ins,
    on their recorded device, for those replaced); ({}, why) when the graph cannot run eagerly. A graph with inputs
    over the caps runs on the meta device first: its values are only asked whether they are tensors, and a copy of
    a 1 GiB input would cost the job that much again."""
    if any(m.get("kept") in ("disk", "statistics") for m in inputs_meta):
        try:
            with torch.no_grad():
                return node_values(gm, aliases.copied(list(inputs), lambda t: t.detach().to("meta"), groups)), ""
        except Exception:  # an op with no meta kernel, a value asked of a tensor (.item()): run it for real
            pass
    # Copies: a graph that writes to its inputs must not write to the running job's tensors a second time.
    real = [m.get("kept") != "statistics" for m in inputs_meta]
    made = synthetic_inputs([m if m.get("kept") == "statistics" else {"kind": "none"} for m in inputs_meta])
    whole = [g for g in groups if real[g["inputs"][0]]]
    copies = aliases.copied([t if r else None for t, r in zip(inputs, real)], lambda t: t.detach().clone(), whole)
    probe_inputs = aliases.shared(
        [c if r else s for c, s, r in zip(copies, made, real)], [g for g in groups if g not in whole]
    )
    try:
        with torch.no_grad():
            return node_values(gm, [t.detach() if isinstance(t, torch.Tensor) else t for t in probe_inputs]), ""
    except Exception as e:  # a graph that cannot run eagerly can still be compiled; nothing can be cut
        return {}, f"graph does not run eagerly ({type(e).__name__}); no node can be cut"


def write_prelude(out_dir: str, script, gm, hook_names, process_group: dict | None = None) -> str:
    """prelude.py: the fake process group the graph's collectives need, then the script's registrations and
    hooks; nothing written (and "" returned) when the graph needs neither."""
    from reprokit.fx.collectives import fake_group_prelude

    prelude = script_prelude(script, gm, hook_names)
    prelude = "\n".join(
        p for p in (fake_group_prelude(gm, process_group), prelude) if p
    )  # the group first: ops may need it
    if prelude:
        write_atomic(os.path.join(out_dir, "prelude.py"), prelude)
    return prelude
