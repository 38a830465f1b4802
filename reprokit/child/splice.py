"""A graph run with only some of its nodes compiled: the rest runs eagerly around them.

Used to judge a minifier's candidate as the original run judged the failure: the candidate (a set of computed
nodes, cut inputs and outputs, see fx/graphcase.Edit) is compiled, spliced into the whole graph, and the whole
graph's outputs are what the script, or the accuracy check, sees. A cut that only exposes another op's silent
error (one that never reaches the graph's outputs) then no longer looks like the bug.
"""

from __future__ import annotations

from collections.abc import Callable


def _clone(a):
    import torch

    return a.clone() if isinstance(a, torch.Tensor) else a


def spliced(gm, edit: dict, compile_part: Callable) -> Callable:
    """A callable like gm(*args) in which the nodes `edit["computed"]` run compiled (compile_part(sub_gm, inputs)
    is called once, on the first call) and every other node runs eagerly."""
    from reprokit.fx.materialize import build

    outputs = list(edit["outputs"])
    computed, cut = set(edit["computed"]), list(edit["cut"])
    state: dict = {}

    def spliced_call(*args):
        # Pass 1: the eager values the compiled part takes as inputs (cut nodes), on clones so that an in-place
        # op of the graph is not applied twice; clones keep autograd, so gradients still reach the inputs.
        values = _record(gm, [_clone(a) for a in args], set(cut)) if cut else {}
        sub_gm, sub_inputs = build(gm, list(args), edit, cut_values=values)
        if "compiled" not in state:
            state["compiled"] = compile_part(sub_gm, sub_inputs)
        out = state["compiled"](*sub_inputs)
        produced = dict(zip(outputs, out if isinstance(out, (list, tuple)) else (out,)))
        # Pass 2: the whole graph, eager except what the compiled part produced.
        return _Overridden(gm, {**values, **produced}, computed).run(*args)

    return spliced_call


def _record(gm, args, names: set) -> dict:
    import torch.fx

    values = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.name in names:
                values[n.name] = out
            return out

    Recorder(gm).run(*args)
    return values


def _needed_outside(gm, computed: set, given: set) -> set:
    """Computed nodes whose eager value is still needed by a node that runs eagerly (a dropped output)."""
    need: set = set()
    for n in reversed(list(gm.graph.nodes)):
        if n.name in given:
            continue
        if n.name not in computed or n.name in need:
            need.update(a.name for a in n.all_input_nodes if a.name in computed)
    return need


def _Overridden(gm, given: dict, computed: set):
    import torch.fx

    eager_too = _needed_outside(gm, computed, set(given))

    class Overridden(torch.fx.Interpreter):
        def run_node(self, n):
            if n.name in given:
                return given[n.name]
            if n.name in computed and n.name not in eager_too and n.op != "output":
                return None  # ran compiled; nothing eager reads it
            return super().run_node(n)

    return Overridden(gm)
