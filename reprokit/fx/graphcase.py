"""A captured graph as plain data, and the edits that cut it down. No torch here: the parent reasons
about structure; the trial child (fx/materialize.py) turns an edit into a real GraphModule.

An edit says which nodes are computed, which are cut into inputs (fed the value they had in eager),
and which are outputs. Placeholders needed by what remains stay; everything else is dead code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The calls that open and close a functorch level (vmap, jvp, grad, and the forward-AD dual level). A value computed
# inside one is a wrapper (a BatchedTensor, a dual or grad-tracking tensor) of that level: cut into an input it
# would be a plain tensor, and a graph truncated inside the level never closes it (jacfwd #194706: such cuts failed
# "another way" in trials, and a 29-node repro of them failed differently in a fresh interpreter).
LEVEL_OPENS = {
    "_vmap_increment_nesting",
    "_jvp_increment_nesting",
    "_grad_increment_nesting",
    "_func_increment_nesting",
    "_enter_dual_level",
}
LEVEL_CLOSES = {
    "_vmap_decrement_nesting",
    "_jvp_decrement_nesting",
    "_grad_decrement_nesting",
    "_func_decrement_nesting",
    "_exit_dual_level",
}

# Calls whose result is a view of their first argument's memory (the FX target's last dotted part).
VIEWS = {
    "getitem", "__getitem__", "view", "view_as", "reshape", "select", "slice", "narrow", "t", "transpose",
    "permute", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "unflatten", "as_strided", "diagonal",
    "unfold", "movedim", "split", "chunk", "unbind", "detach", "alias",
}  # fmt: skip


def op_base(target) -> str:
    """An operator's name without namespace, overload or leading underscores: 'aten._softmax.default' -> 'softmax'."""
    parts = str(target or "").split(".")
    return (parts[1] if len(parts) >= 2 else "").lstrip("_")


def _names_op(target: str, base: str) -> bool:
    """Whether a node's target is that operator, at any level: torch.sum, a 'sum' method, torch.ops.aten.sum.dim."""
    return bool(base) and base in (p.lstrip("_") for p in str(target).split("."))


@dataclass(frozen=True)
class NodeInfo:
    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str
    deps: tuple  # names of the nodes it reads
    tensor: bool  # its eager value is a single tensor, so it can be cut into an input or be an output
    mutates: bool = False  # writes into one of its inputs: live even when nothing reads its result


@dataclass(frozen=True)
class Edit:
    computed: frozenset
    cut: frozenset
    outputs: tuple

    def to_dict(self) -> dict:
        return {"computed": sorted(self.computed), "cut": sorted(self.cut), "outputs": list(self.outputs)}

    @classmethod
    def from_dict(cls, d: dict) -> Edit:
        return cls(frozenset(d["computed"]), frozenset(d["cut"]), tuple(d["outputs"]))


@dataclass
class GraphShape:
    nodes: list  # NodeInfo in graph order, output node excluded
    outputs: tuple  # names the original graph returns
    by_name: dict = field(default_factory=dict)
    shared: frozenset = frozenset()  # placeholders that share memory with another input (meta's "aliases")

    def __post_init__(self):
        self.by_name = {n.name: n for n in self.nodes}
        self.shared_views: set = set()  # views, at any depth, of a shared input
        for n in self.nodes:
            base = n.deps[0] if n.deps else None
            if n.op != "placeholder" and str(n.target).split(".")[-1] in VIEWS and base is not None:
                if base in self.shared or base in self.shared_views:
                    self.shared_views.add(n.name)
        depth, self.in_level = 0, set()
        for n in self.nodes:
            if n.op == "call_function" and n.target in LEVEL_CLOSES:
                depth = max(0, depth - 1)
            if depth:
                self.in_level.add(n.name)  # computed while a level is open (its opening call is not)
            if n.op == "call_function" and n.target in LEVEL_OPENS:
                depth += 1

    @classmethod
    def from_meta(cls, meta: dict) -> GraphShape:
        nodes = [
            NodeInfo(n["name"], n["op"], n["target"], tuple(n["deps"]), bool(n["tensor"]), bool(n.get("mutates")))
            for n in meta["nodes"]
        ]
        placeholders = [n.name for n in nodes if n.op == "placeholder"]
        shared = {placeholders[i] for g in meta.get("aliases") or [] for i in g["inputs"] if i < len(placeholders)}
        return cls(nodes=nodes, outputs=tuple(meta["outputs"]), shared=frozenset(shared))

    @property
    def body(self) -> list:
        """Nodes that compute something (not placeholders)."""
        return [n.name for n in self.nodes if n.op != "placeholder"]

    def original(self) -> Edit:
        return self.normalise(Edit(frozenset(self.body), frozenset(), self.outputs))

    # -- the one place that decides what an edit really contains -----------------------------------
    def normalise(self, edit: Edit) -> Edit:
        """Drop dead code: keep only computed and cut nodes that some output or in-place write depends on."""
        live: set = set()
        stack = list(edit.outputs) + [n for n in edit.computed if self.by_name[n].mutates]
        while stack:
            name = stack.pop()
            if name in live:
                continue
            live.add(name)
            if name in edit.computed:
                stack.extend(self.by_name[name].deps)
        return Edit(frozenset(edit.computed & live), frozenset(edit.cut & live), edit.outputs)

    def inputs_of(self, edit: Edit) -> list:
        """Placeholders and cut nodes the edited graph takes, in graph order."""
        needed = set(edit.outputs)
        for name in edit.computed:
            needed.update(self.by_name[name].deps)
        return [
            n.name
            for n in self.nodes
            if n.name in needed and (n.op == "placeholder" or n.name in edit.cut) and n.name not in edit.computed
        ]

    def size(self, edit: Edit) -> int:
        """FX node count of the edited graph: inputs + computed nodes + the output node."""
        return len(self.inputs_of(edit)) + len(edit.computed) + 1

    # -- edits ----------------------------------------------------------------------------------
    def truncate_after(self, edit: Edit, index: int) -> Edit | None:
        """Keep the computed nodes up to body position `index`; return what is still live there."""
        order = [n for n in self.body if n in edit.computed]
        kept = set(order[: index + 1])
        if not kept or order[index] in self.in_level or (index + 1 < len(order) and order[index + 1] in self.in_level):
            return None  # inside a functorch level: the cut would leave it open
        outs = []
        for name in order[: index + 1]:
            node = self.by_name[name]
            used_later = any(name in self.by_name[u].deps for u in order[index + 1 :])
            if node.tensor and (used_later or name in edit.outputs or name == order[index]):
                outs.append(name)
        if not outs:
            return None
        return self.normalise(Edit(frozenset(kept), edit.cut, tuple(outs)))

    def with_outputs(self, edit: Edit, outputs) -> Edit | None:
        if not outputs:
            return None
        return self.normalise(Edit(edit.computed, edit.cut, tuple(outputs)))

    def keep_computed(self, edit: Edit, keep) -> Edit:
        """Cut every computed tensor node not in `keep` into an input (non-tensor nodes stay computed)."""
        keep = set(keep) | (set(edit.computed) - set(self.cuttable(edit)))
        to_cut = {n for n in edit.computed if n not in keep and self.by_name[n].tensor}
        return self.normalise(Edit(edit.computed - to_cut, edit.cut | to_cut, edit.outputs))

    def effect_calls(self, edit: Edit) -> list:
        """Computed calls made for their effect alone (no tensor, nothing reads them: a grad-mode switch,
        _maybe_load_decompositions), a functorch level's opening and closing calls left out: they stay a pair."""
        read = {d for n in edit.computed for d in self.by_name[n].deps}
        return [
            n
            for n in self.body
            if n in edit.computed
            and self.by_name[n].mutates
            and not self.by_name[n].tensor
            and n not in read
            and self.by_name[n].target not in LEVEL_OPENS | LEVEL_CLOSES
        ]

    def without(self, edit: Edit, names) -> Edit:
        """The edit with these computed nodes gone."""
        return self.normalise(Edit(edit.computed - set(names), edit.cut, edit.outputs))

    def nodes_of_op(self, edit: Edit, op: str) -> list:
        """The computed nodes that call `op` ('aten.sum.dim_IntList', as a lowering application names it)."""
        base = op_base(op)
        return [n for n in self.body if n in edit.computed and _names_op(self.by_name[n].target, base)]

    def cuttable(self, edit: Edit) -> list:
        """Computed tensor nodes that may become inputs. Not a tensor an in-place op writes into: as an input
        it would be a copy, no longer the view of what the graph returns, and the write would go nowhere. Not a
        value computed inside a functorch level: as an input it would lose its level. Not a view of an input that
        shares memory with another: as an input its sharing is not the graph's (#198095: `recent[0]` cut failed
        in its trial and passed as repro.py, and the repro fell back to the uncut graph in the script)."""
        written = {self.by_name[n].deps[0] for n in edit.computed if self.by_name[n].mutates and self.by_name[n].deps}
        kept = written | self.in_level | self.shared_views
        return [n for n in self.body if n in edit.computed and self.by_name[n].tensor and n not in kept]
