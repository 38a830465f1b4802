"""The graph the original run saved as it raised: once it fails alone the same way, the stages and every later
question are asked of it (graph trials), not of the script."""

from unit.fakes import bisector, events_of, failed, original, passed, runner_of, saved_failing_graph

COUNTS = {"inductor/lowerings": 30}


def saved_graph_table(trial_dir: str, fails_alone: bool = True):
    """The script fails under inductor in graph 1 of 3, which the original saved; alone it fails as the script."""

    def answer(spec):
        if spec.mode == "graph":
            bad = fails_alone and spec.stage == "inductor"
            sub = spec.subsystem
            if bad and sub is not None and sub.get("name") == "lowerings" and sub["max"] < 12:
                return passed()
            return failed(counters=COUNTS) if bad and not (sub and "names" in sub) else passed()
        if spec.stage == "none":
            return passed()
        if spec.stage == "user":
            return original(graphs=3, failed_graph=1, trial_dir=trial_dir, counters=COUNTS)
        if spec.only_graph is not None:
            return failed() if spec.only_graph == 1 and spec.stage == "inductor" else passed()
        return failed(counters=COUNTS) if spec.stage == "inductor" else passed(graphs=3)

    return answer


def test_a_saved_graph_failing_alone_answers_the_ladder_and_names_the_graph(tmp_path):
    b = bisector(saved_graph_table(saved_failing_graph(str(tmp_path))), configs=False)
    isolation = b.isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage, isolation.graph) == (
        "inductor",
        "aot_eager_decomp_partition",
        1,
    )
    assert isolation.graph_case == str(tmp_path / "original" / "failing_case")
    # The script ran twice, without compile and as written; every question after is of the graph.
    script_runs = [spec.label for spec in runner_of(b).asked if spec.mode == "script"]
    assert sorted(script_runs) == ["baseline-no-compile", "original"]


def test_the_later_questions_are_graph_trials_of_the_saved_graph(tmp_path):
    b = bisector(saved_graph_table(saved_failing_graph(str(tmp_path))), configs=False)
    isolation = b.isolate()
    assert isolation.subsystem is not None and isolation.subsystem["application"] == 12
    counter_trials = [spec for spec in runner_of(b).asked if spec.subsystem]
    assert counter_trials and all(spec.mode == "graph" for spec in counter_trials)


def test_a_saved_graph_that_passes_alone_leaves_the_script_to_answer(tmp_path):
    b = bisector(saved_graph_table(saved_failing_graph(str(tmp_path)), fails_alone=False), subsystems=False)
    isolation = b.isolate()
    assert isolation.failing_stage == "inductor" and isolation.graph == 1 and isolation.graph_case is None
    assert any("does not fail alone the same way under any stage" in note for note in events_of(b).notes())
    assert "graph-1" in runner_of(b).labels()
