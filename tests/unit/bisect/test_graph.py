"""Which graph: of the graphs Dynamo made, the one that fails the same way alone under the failing stage."""

from unit.fakes import bisector, failed, original, passed, runner_of, session

STAGES_BEFORE_INDUCTOR = ("eager", "aot_eager", "aot_eager_decomp_partition")


def graphs_table(bad: int, graphs: int = 4, failed_graph=None):
    """Inductor fails the script; compiled alone by inductor (the others eager), only graph `bad` fails."""

    def answer(spec):
        if spec.stage in ("none", *STAGES_BEFORE_INDUCTOR):
            return passed(graphs=graphs)
        if spec.stage == "user":
            return original(graphs=graphs, failed_graph=failed_graph)
        if spec.only_graph is not None:
            return failed() if spec.only_graph == bad else passed()
        return failed(graphs=graphs)

    return answer


def graph_trials(runner) -> list[str]:
    return [label for label in runner.labels() if label.startswith("graph-")]


def test_the_graph_that_fails_alone_is_named_asking_the_last_graph_first():
    b = bisector(graphs_table(bad=1), subsystems=False, configs=False)
    isolation = b.isolate()
    assert (isolation.graph, isolation.graph_count) == (1, 4)
    assert graph_trials(runner_of(b)) == ["graph-3", "graph-2", "graph-1"]


def test_the_graph_the_failure_was_raised_in_is_asked_first():
    b = bisector(graphs_table(bad=1, failed_graph=1), subsystems=False, configs=False)
    assert b.isolate().graph == 1
    assert graph_trials(runner_of(b)) == ["graph-1"]


def test_the_other_graphs_go_through_the_last_passing_stage():
    b = bisector(graphs_table(bad=0), subsystems=False, configs=False)
    b.isolate()
    asked = [spec for spec in runner_of(b).asked if spec.only_graph is not None]
    assert {(spec.stage, spec.other_stage) for spec in asked} == {("inductor", "aot_eager_decomp_partition")}


def test_one_graph_is_named_without_a_trial():
    b = bisector(graphs_table(bad=0, graphs=1), subsystems=False, configs=False)
    assert b.isolate().graph == 0
    assert graph_trials(runner_of(b)) == []


def test_no_graph_is_named_when_none_fails_alone():
    b = bisector(graphs_table(bad=99, graphs=3), subsystems=False, configs=False)
    assert b.isolate().graph is None
    assert len(graph_trials(runner_of(b))) == 3


def test_a_failure_in_dynamo_itself_names_no_graph():
    from reprokit.bisect.graph import failing_graph

    s = session(lambda spec: failed())
    assert failing_graph(s, "eager", "none", failed(graphs=3)) is None
    assert runner_of(s).asked == []
