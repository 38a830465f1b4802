"""Graph edits on plain data: truncation, output drops, cuts into inputs, dead code."""

from reprokit.fx.graphcase import GraphShape


def shape():
    # x, w -> a = x*w -> b = relu(a) -> c = b+1 -> d = c.sum(); outputs (d, a)
    meta = {
        "nodes": [
            {"name": "x", "op": "placeholder", "target": "x", "deps": [], "tensor": True},
            {"name": "w", "op": "placeholder", "target": "w", "deps": [], "tensor": True},
            {"name": "a", "op": "call_function", "target": "mul", "deps": ["x", "w"], "tensor": True},
            {"name": "b", "op": "call_function", "target": "relu", "deps": ["a"], "tensor": True},
            {"name": "c", "op": "call_function", "target": "add", "deps": ["b"], "tensor": True},
            {"name": "d", "op": "call_method", "target": "sum", "deps": ["c"], "tensor": True},
        ],
        "outputs": ["d", "a"],
    }
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
    meta = {
        "nodes": [
            {"name": "x", "op": "placeholder", "target": "x", "deps": [], "tensor": True},
            {"name": "frames", "op": "call_method", "target": "unfold", "deps": ["x"], "tensor": True},
            {
                "name": "mul_",
                "op": "call_method",
                "target": "mul_",
                "deps": ["frames"],
                "tensor": True,
                "mutates": True,
            },
        ],
        "outputs": ["x"],
    }
    shape = GraphShape.from_meta(meta)
    edit = shape.original()
    assert edit.computed == {"frames", "mul_"}  # the write is live though nothing reads its result
    assert "frames" not in shape.cuttable(edit)
    assert shape.keep_computed(edit, ["mul_"]).cut == frozenset()


def test_no_cut_inside_a_functorch_level_of_a_real_jacfwd_graph():
    """The graph Dynamo hands a backend for torch.func.jacfwd (pytorch/pytorch#194706's shape): values computed
    while a vmap or jvp level is open are no inputs, and no truncation leaves a level open."""
    import torch

    from reprokit.fx.capture import describe_nodes, node_values

    graphs = []

    def backend(gm, inputs):
        graphs.append((gm, list(inputs)))
        return gm.forward

    torch.compile(torch.func.jacfwd(lambda x: (x.sin() @ x).sum(1)), backend=backend)(torch.randn(3, 3))
    gm, inputs = graphs[0]
    nodes, outputs = describe_nodes(gm, node_values(gm, inputs))
    s = GraphShape.from_meta({"nodes": nodes, "outputs": outputs})
    targets = [n.target for n in s.nodes]
    opened, closed = targets.index("_vmap_increment_nesting"), targets.index("_vmap_decrement_nesting")
    inside = {n.name for n in s.nodes[opened + 1 : closed]}
    assert inside and inside <= s.in_level and not s.in_level & {n.name for n in s.nodes[closed:]}
    edit = s.original()
    assert not set(s.cuttable(edit)) & inside
    assert s.cuttable(edit)  # the values outside the levels still may be cut
    body = [n for n in s.body if n in edit.computed]
    kept = [i for i in range(len(body)) if s.truncate_after(edit, i) is not None]
    assert kept and all(body[i] not in inside and (i + 1 == len(body) or body[i + 1] not in inside) for i in kept)


def test_every_call_of_a_real_jacfwd_graph_is_kept_by_the_uncut_edit():
    """Dynamo hands over graphs without dead code: a call nothing reads is kept for its effect (torch's is_impure
    misses _vmap_increment_nesting), so the uncut edit is the whole graph."""
    import torch

    from reprokit.fx.capture import describe_nodes, node_values

    graphs = []
    torch.compile(
        torch.func.jacfwd(lambda x: (x.sin() @ x).sum(1)),
        backend=lambda gm, inputs: graphs.append((gm, list(inputs))) or gm.forward,
    )(torch.randn(3, 3))
    gm, inputs = graphs[0]
    nodes, outputs = describe_nodes(gm, node_values(gm, inputs))
    s = GraphShape.from_meta({"nodes": nodes, "outputs": outputs})
    assert s.original().computed == set(s.body)
    assert {"_vmap_increment_nesting", "_vmap_decrement_nesting"} <= {n.target for n in s.nodes if n.mutates}


def test_the_failing_lowerings_op_is_cut_last_and_the_same_graph_found_in_fewer_questions():
    """With the operator the lowering bisect named, the cuts that would feed it its value instead of computing it
    are not asked first (issue #32); the result is the same graph (a pure predicate stands in for trials)."""
    from reprokit.minify.graph import reduce_graph
    from reprokit.search import Problem

    def chain(n=12):
        # x -> m0 -> ... -> m11 -> s = sum(m11) -> a0 = s + m0 -> ... -> a11: one output
        nodes = [{"name": "x", "op": "placeholder", "target": "x", "deps": [], "tensor": True}]
        nodes += [
            {
                "name": f"m{i}",
                "op": "call_function",
                "target": "torch.ops.aten.mul.Tensor",
                "deps": ["x" if i == 0 else f"m{i - 1}"],
                "tensor": True,
            }
            for i in range(n)
        ]
        nodes.append(
            {
                "name": "s",
                "op": "call_function",
                "target": "torch.ops.aten.sum.dim_IntList",
                "deps": [f"m{n - 1}"],
                "tensor": True,
            }
        )
        nodes += [
            {
                "name": f"a{i}",
                "op": "call_function",
                "target": "torch.ops.aten.add.Tensor",
                "deps": ["s" if i == 0 else f"a{i - 1}", f"m{i}"],
                "tensor": True,
            }
            for i in range(n)
        ]
        return GraphShape.from_meta({"nodes": nodes, "outputs": [f"a{n - 1}"]})

    asked, found = {}, {}
    for op in (None, "aten.sum.dim_IntList"):
        s, questions = chain(), []

        def fails(e):  # the sum's lowering breaks where its value is used
            questions.append(e)  # noqa: B023 (called at once, in the loop)
            return e is not None and {"s", "a0"} <= e.computed

        problem = Problem(s.original(), fails, s.size)
        best = reduce_graph(problem, s, width=2, op=op)
        asked[op], found[op] = len(questions), (best.computed, s.inputs_of(best), s.size(best))
    assert found[None] == found["aten.sum.dim_IntList"] == ({"s", "a0"}, ["m0", "m11"], 5), found
    assert asked["aten.sum.dim_IntList"] < asked[None], asked


def test_a_view_of_an_input_sharing_memory_stays_computed_and_a_lone_write_is_cut_away():
    """#198095 on torch 2.13 (tests/real_bugs/c_memory_bank_alias_view.py, its captured meta): `recent` is a view of
    `bank`, which the graph writes in place. Cut into an input, `recent[0]` was fed the view in the trial and written
    as a tensor of its own in repro.py: the 6-node cut failed in its trial and in no fresh interpreter, and the
    repro fell back to the 7-node graph in the script. The view stays computed; add_, the only cuttable node and a
    write in place, is cut away instead (a pure predicate, the bug as the trials found it, stands in for them)."""
    from reprokit.minify.graph import reduce_graph
    from reprokit.search import Problem

    def node(name, op, target, deps, mutates=False):
        return {"name": name, "op": op, "target": target, "deps": deps, "tensor": True, "mutates": mutates}

    meta = {
        "nodes": [
            node("l_bank_", "placeholder", "L_bank_", []),
            node("l_update_", "placeholder", "L_update_", []),
            node("l_recent_", "placeholder", "L_recent_", []),
            node("mul_", "call_method", "mul_", ["l_bank_"], mutates=True),
            node("add_", "call_method", "add_", ["mul_", "l_update_"], mutates=True),
            node("getitem", "call_function", "getitem", ["l_recent_"]),
        ],
        "outputs": ["getitem"],
        "aliases": [{"inputs": [0, 2], "numel": 48, "offsets": [0, 8]}],
    }
    s = GraphShape.from_meta(meta)
    assert s.cuttable(s.original()) == ["add_"]  # mul_ is written by add_, getitem a view of a shared input

    def fails(e):  # the returned view regenerated from the wrong base: bank written in place, recent[0] returned
        return e is not None and {"mul_", "getitem"} <= e.computed

    best = reduce_graph(Problem(s.original(), fails, s.size), s, width=2)
    assert (best.computed, s.inputs_of(best), s.size(best)) == ({"mul_", "getitem"}, ["l_bank_", "l_recent_"], 5)


def test_calls_made_for_their_effect_are_dropped_and_a_functorch_levels_pair_stays():
    """#197086 on torch 2.13 (tests/real_bugs/e_jvp_ldexp_aot_eager.py, its captured meta): every value is inside the
    jvp level, so nothing may be cut into an input; the calls made for their effect alone are tried away, and the
    level's opening and closing calls stay (a pure predicate stands in for the trials: the crash needs the level)."""
    from reprokit.minify.graph import reduce_graph
    from reprokit.search import Problem

    def node(name, target, deps=(), tensor=True, mutates=False):
        op = "placeholder" if target.startswith("L_") else "call_function"
        return {"name": name, "op": op, "target": target, "deps": list(deps), "tensor": tensor, "mutates": mutates}

    def effect(name, target):
        return node(name, target, tensor=False, mutates=True)

    meta = {
        "nodes": [
            node("l_w_", "L_w_"),
            node("l_direction_", "L_direction_"),
            node("g_exponents_", "L_exponents_"),
            effect("_jvp_increment_nesting", "_jvp_increment_nesting"),
            effect("_set_fwd_grad_enabled", "_set_fwd_grad_enabled"),
            effect("_enter_dual_level", "_enter_dual_level"),
            effect("_maybe_load_decompositions", "_maybe_load_decompositions"),
            node("_make_dual", "_make_dual", ["l_w_", "l_direction_"]),
            node("result_duals", "ldexp", ["_make_dual", "g_exponents_"]),
            node("_unpack_dual", "_unpack_dual", ["result_duals"], tensor=False),
            node("primal", "getitem", ["_unpack_dual"]),
            node("dual", "getitem", ["_unpack_dual"]),
            node("primals_out_unflatten", "_unwrap_for_grad", ["primal"]),
            node("tangents_out_unflatten", "_unwrap_for_grad", ["dual"]),
            effect("_exit_dual_level", "_exit_dual_level"),
            effect("_set_fwd_grad_enabled_1", "_set_fwd_grad_enabled"),
            effect("_jvp_decrement_nesting", "_jvp_decrement_nesting"),
        ],
        "outputs": ["primals_out_unflatten", "tangents_out_unflatten"],
    }
    s = GraphShape.from_meta(meta)
    assert s.size(s.original()) == 18
    level = {"_jvp_increment_nesting", "_enter_dual_level", "_exit_dual_level", "_jvp_decrement_nesting"}

    def fails(e):  # the crash: ldexp on a dual tensor, its tangent returned, inside the level
        return e is not None and level | {"result_duals", "tangents_out_unflatten"} <= e.computed

    best = reduce_graph(Problem(s.original(), fails, s.size), s, width=2)
    assert not {"_maybe_load_decompositions", "_set_fwd_grad_enabled", "_set_fwd_grad_enabled_1"} & best.computed
    assert level <= best.computed and s.size(best) == 13  # 16 before: the calls nothing reads were all kept
