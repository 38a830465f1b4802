"""Whether a graph draws random numbers (dropout, rand*, bernoulli, ...): then its results depend on the generator's
state, every run compared must start from one state, and a float64 run, which draws a mask of its own, is no
referee of a difference (issue 46: compiled code that skipped dropout looked "no farther from float64 than eager")."""

from __future__ import annotations

# Names of random ops as Dynamo's graphs call them (torch.rand, F.dropout, x.bernoulli_, nn.Dropout) and as
# AOT autograd's do (aten.native_dropout); aten ops also carry torch's nondeterministic_seeded tag.
_NAMES = frozenset(
    {
        "bernoulli",
        "multinomial",
        "normal",
        "poisson",
        "uniform",
        "exponential",
        "cauchy",
        "geometric",
        "log_normal",
        "rrelu",
        "rrelu_with_noise",
        "inductor_random",
        "inductor_seeds",
    }
)


def random_name(name: str) -> bool:
    """True for the name of a random op or method (its namespace and overload left off)."""
    parts = [p for p in name.split(".") if p not in ("default", "Tensor", "float", "out", "p", "")]
    last = (parts[-1] if parts else name).rstrip("_").lower()
    return "dropout" in last or last.startswith("rand") or last in _NAMES


def random_target(target) -> bool:
    """True when a graph node's target draws random numbers."""
    import torch

    tags = getattr(target, "tags", None)
    if tags is not None and torch.Tag.nondeterministic_seeded in tags:
        return True
    if isinstance(target, str):
        return random_name(target)
    return random_name(getattr(target, "__name__", "") or str(target))


def draws_random(gm) -> bool:
    """True when the graph (or a module it calls) has a random op; False for anything without a graph."""
    graph = getattr(gm, "graph", None)
    if graph is None:
        return False
    for node in graph.nodes:
        if node.op in ("call_function", "call_method") and random_target(node.target):
            return True
        if node.op == "call_module":
            sub = gm.get_submodule(node.target)
            if "dropout" in type(sub).__name__.lower() or draws_random(sub):
                return True
    return False
