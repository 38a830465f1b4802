"""Save and load an FX GraphModule node by node (trial child only).

GraphModule's own pickling re-traces the generated code, which renames nodes and flattens
higher-order ops (an autograd.Function's forward/backward bodies are inlined and its custom backward
is lost). This keeps the graph exactly: nodes, targets by qualified name, submodules recursively,
tensor attributes as they are.
"""

from __future__ import annotations

import importlib
import io

import torch
import torch.fx


class NodeRef:
    def __init__(self, name: str):
        self.name = name


class Target:
    def __init__(self, qualname: str):
        self.qualname = qualname


def _qualname(fn) -> str:
    from reprokit import compat

    return compat.op_qualname(fn)


def resolve(qualname: str):
    """The object a qualified name refers to: the longest importable module prefix, then attributes."""
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    import builtins

    obj = builtins
    for p in parts:
        obj = getattr(obj, p)
    return obj


def _encode(x):
    if isinstance(x, torch.fx.Node):
        return NodeRef(x.name)
    if isinstance(x, (list, tuple)):
        return type(x)(_encode(a) for a in x) if not hasattr(x, "_fields") else type(x)(*[_encode(a) for a in x])
    if isinstance(x, dict):
        return {k: _encode(v) for k, v in x.items()}
    if callable(x) and not isinstance(x, (torch.dtype, torch.device, torch.layout, torch.memory_format, type)):
        return Target(_qualname(x))
    return x


def _decode(x, env):
    if isinstance(x, NodeRef):
        return env[x.name]
    if isinstance(x, Target):
        return resolve(x.qualname)
    if isinstance(x, (list, tuple)):
        return (
            type(x)(_decode(a, env) for a in x) if not hasattr(x, "_fields") else type(x)(*[_decode(a, env) for a in x])
        )
    if isinstance(x, dict):
        return {k: _decode(v, env) for k, v in x.items()}
    return x


def _fetch(root, target: str):
    obj = root
    for p in target.split("."):
        obj = getattr(obj, p)
    return obj


def encode_module(gm: torch.fx.GraphModule) -> dict:
    nodes, attrs = [], {}
    for n in gm.graph.nodes:
        target = n.target if isinstance(n.target, str) else Target(_qualname(n.target))
        nodes.append(
            {
                "op": n.op,
                "name": n.name,
                "target": target,
                "args": _encode(n.args),
                "kwargs": _encode(n.kwargs),
                "type": n.type if isinstance(n.type, type) else None,
            }
        )
        if n.op in ("get_attr", "call_module"):
            value = _fetch(gm, n.target)
            attrs[n.target] = encode_module(value) if isinstance(value, torch.fx.GraphModule) else value
    return {"nodes": nodes, "attrs": attrs}


def decode_module(data: dict) -> torch.fx.GraphModule:
    root = torch.nn.Module()
    for target, value in data["attrs"].items():
        value = decode_module(value) if isinstance(value, dict) and "nodes" in value else value
        *path, leaf = target.split(".")
        owner = root
        for p in path:
            if not hasattr(owner, p):
                owner.add_module(p, torch.nn.Module())
            owner = getattr(owner, p)
        if isinstance(value, torch.nn.Module):
            owner.add_module(leaf, value)
        elif isinstance(value, torch.nn.Parameter):
            owner.register_parameter(leaf, value)
        elif isinstance(value, torch.Tensor):
            owner.register_buffer(leaf, value)
        else:
            setattr(owner, leaf, value)
    graph = torch.fx.Graph()
    env: dict = {}
    for n in data["nodes"]:
        target = n["target"] if isinstance(n["target"], str) else resolve(n["target"].qualname)
        if n["op"] == "output":
            graph.output(_decode(n["args"][0], env))
            continue
        node = graph.create_node(
            n["op"], target, _decode(n["args"], env), _decode(n["kwargs"], env), name=n["name"], type_expr=n.get("type")
        )
        env[n["name"]] = node
    return torch.fx.GraphModule(root, graph)


def save(gm: torch.fx.GraphModule) -> bytes:
    buf = io.BytesIO()
    torch.save(encode_module(gm), buf)
    return buf.getvalue()


def load(path: str) -> torch.fx.GraphModule:
    return decode_module(torch.load(path, weights_only=False))
