"""The graph minified inside the running script: each edit is a whole-script trial, and the script decides."""

from reprokit.minify.graph import reduce_graph
from unit.fakes import chain_graph, edit_of, failed, passed, script_minifier

SHAPE = chain_graph("add", "mul", "relu")


def script_check_fails(spec):
    """The script's own check fails while relu_2 is computed in the spliced graph."""
    return failed() if "relu_2" in edit_of(spec).computed else passed()


def test_each_candidate_is_the_whole_script_with_the_edit_spliced_into_its_graph(tmp_path):
    problem, runner = script_minifier(script_check_fails, SHAPE, str(tmp_path), graph=2)
    best = reduce_graph(problem, SHAPE, width=1)
    assert best.computed == {"relu_2"}
    assert all(spec.mode == "script" and spec.only_graph == 2 for spec in runner.asked)
    assert all(spec.save_graph is None for spec in runner.asked)  # a candidate saves nothing
