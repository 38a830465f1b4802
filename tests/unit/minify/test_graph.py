"""The graph minifier's passes: only smaller edits that fail the same way are accepted, down to the failing op."""

import json

from reprokit.minify.graph import reduce_graph
from unit.fakes import BUG, OTHER, chain_graph, edit_of, failed, graph_minifier, graph_of, passed

# x -> add_0 -> mul_1 -> relu_2 -> sum_3 -> neg_4: the bug is in relu's kernel.
SHAPE = chain_graph("add", "mul", "relu", "sum", "neg")


def relu_fails(spec):
    """Any edit that computes relu_2 fails the same way; the rest pass."""
    return failed() if "relu_2" in edit_of(spec).computed else passed()


def minified(answer, tmp_path, shape=SHAPE, **kw):
    problem, oracle, runner = graph_minifier(answer, shape, str(tmp_path), **kw)
    return reduce_graph(problem, shape, width=runner.jobs), problem, oracle, runner


def test_the_graph_is_cut_down_to_the_node_that_fails_its_input_fed_its_eager_value(tmp_path):
    best, problem, _, _ = minified(relu_fails, tmp_path)
    assert best.computed == {"relu_2"}
    assert best.cut == {"mul_1"} and best.outputs == ("relu_2",)
    assert (SHAPE.size(SHAPE.original()), SHAPE.size(best)) == (7, 3)


def test_each_accepted_edit_is_strictly_smaller_than_the_one_before(tmp_path):
    _, problem, _, _ = minified(relu_fails, tmp_path)
    sizes = [SHAPE.size(edit) for edit in problem.accepted]
    assert sizes == sorted(set(sizes), reverse=True) and len(sizes) > 1


def test_an_edit_that_fails_another_way_is_refused_and_kept_for_the_report(tmp_path):
    # Feeding relu an input instead of computing mul fails another way: mul stays computed.
    def answer(spec):
        edit = edit_of(spec)
        if "mul_1" in edit.cut:
            return failed(OTHER)
        return relu_fails(spec)

    best, _, oracle, _ = minified(answer, tmp_path)
    assert best.computed == {"mul_1", "relu_2"}
    assert oracle.refused and all(r["signature"]["exc_type"] == "ValueError" for r in oracle.refused)


def test_every_improvement_is_saved_for_a_resume(tmp_path):
    best, _, _, _ = minified(relu_fails, tmp_path)
    saved = json.loads((tmp_path / "minify.json").read_text())
    assert saved["best"] == best.to_dict() and saved["nodes"] == 3


def test_only_the_output_that_fails_is_kept(tmp_path):
    # x -> a (relu) and x -> b (sin), both returned: only a fails.
    shape = graph_of([("x", "x", ()), ("a", "relu", ("x",)), ("b", "sin", ("x",))], outputs=("a", "b"))

    def answer(spec):
        return failed() if "a" in edit_of(spec).outputs else passed()

    best, _, _, _ = minified(answer, tmp_path, shape=shape)
    assert best.outputs == ("a",) and best.computed == {"a"}


def test_the_search_is_not_asked_about_an_edit_twice(tmp_path):
    _, _, _, runner = minified(relu_fails, tmp_path)
    keys = [spec.key() for spec in runner.asked]
    assert len(keys) == len(set(keys))


def test_a_spent_budget_ends_the_cut_at_the_smallest_graph_so_far(tmp_path):
    best, problem, oracle, runner = minified(relu_fails, tmp_path, budget=2)
    assert runner.over_budget > 0
    assert best == problem.best and "relu_2" in best.computed  # still fails the same way
    assert SHAPE.size(best) < SHAPE.size(SHAPE.original())


def test_a_graph_that_does_not_fail_at_all_stays_whole(tmp_path):
    best, problem, _, _ = minified(lambda spec: passed(), tmp_path)
    assert best == SHAPE.original() and problem.accepted == [SHAPE.original()]


def test_the_target_decides_what_fails_the_same_way(tmp_path):
    best, _, _, _ = minified(lambda spec: failed(BUG), tmp_path, target=OTHER)
    assert best == SHAPE.original()
