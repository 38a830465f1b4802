"""Graph edits on plain data: truncation, output drops, cuts into inputs, dead code."""
from reprokit.fx.graphcase import GraphShape


def shape():
    # x, w -> a = x*w -> b = relu(a) -> c = b+1 -> d = c.sum(); outputs (d, a)
    meta = {"nodes": [
        {"name": "x", "op": "placeholder", "target": "x", "deps": [], "tensor": True},
        {"name": "w", "op": "placeholder", "target": "w", "deps": [], "tensor": True},
        {"name": "a", "op": "call_function", "target": "mul", "deps": ["x", "w"], "tensor": True},
        {"name": "b", "op": "call_function", "target": "relu", "deps": ["a"], "tensor": True},
        {"name": "c", "op": "call_function", "target": "add", "deps": ["b"], "tensor": True},
        {"name": "d", "op": "call_method", "target": "sum", "deps": ["c"], "tensor": True},
    ], "outputs": ["d", "a"]}
    return GraphShape.from_meta(meta)


def test_original_counts_every_fx_node():
    s = shape()
    assert s.size(s.original()) == 2 + 4 + 1


def test_truncate_keeps_live_values_as_outputs():
    s = shape()
    e = s.truncate_after(s.original(), 1)  # keep a, b
    assert e.computed == {"a", "b"}
    assert set(e.outputs) == {"a", "b"}


def test_cut_turns_nodes_into_inputs_and_drops_dead_inputs():
    s = shape()
    e = s.with_outputs(s.original(), ["d"])
    e = s.keep_computed(e, ["c", "d"])
    assert e.computed == {"c", "d"}
    assert e.cut == {"b"}
    assert s.inputs_of(e) == ["b"]  # x and w are dead now
    assert s.size(e) == 1 + 2 + 1


def test_normalise_removes_dead_code():
    s = shape()
    e = s.with_outputs(s.original(), ["a"])
    assert e.computed == {"a"}
    assert s.inputs_of(e) == ["x", "w"]


def test_graph_passes_cut_to_the_failing_node_through_the_problem():
    """The graph passes propose edits; only the Problem decides the best (a pure predicate stands in for trials)."""
    from reprokit.minify.graph import graph_passes, reduce_graph
    from reprokit.search import Problem

    s = shape()
    improved = []
    # "relu fails": any edit that still computes b.
    problem = Problem(s.original(), lambda e: e is not None and "b" in e.computed, s.size, on_improve=improved.append)
    best = reduce_graph(problem, s, width=2)
    assert best == problem.best
    assert best.computed == {"b"} and best.outputs == ("b",) and s.inputs_of(best) == ["a"]
    assert s.size(best) == 3  # input a, relu, output
    assert [s.size(e) for e in improved] == sorted({s.size(e) for e in improved}, reverse=True)
    assert {name for name, _ in problem.improvements} <= {p.name for p in graph_passes(s, 2)}


def test_a_tensor_written_in_place_is_never_cut_into_an_input():
    """x.unfold(...).mul_(2) writes into x through the view: cutting the view into an input (a copy) would
    make the write vanish, and a minifier would mistake that for the bug (pytorch/pytorch#198102)."""
    meta = {"nodes": [{"name": "x", "op": "placeholder", "target": "x", "deps": [], "tensor": True},
                      {"name": "frames", "op": "call_method", "target": "unfold", "deps": ["x"], "tensor": True},
                      {"name": "mul_", "op": "call_method", "target": "mul_", "deps": ["frames"], "tensor": True,
                       "mutates": True}],
            "outputs": ["x"]}
    shape = GraphShape.from_meta(meta)
    edit = shape.original()
    assert edit.computed == {"frames", "mul_"}  # the write is live though nothing reads its result
    assert "frames" not in shape.cuttable(edit)
    assert shape.keep_computed(edit, ["mul_"]).cut == frozenset()
