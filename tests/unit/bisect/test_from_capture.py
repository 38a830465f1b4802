"""`bisect --from-capture`: the GraphBisector's isolation of a captured graph, every answer a graph trial from the
table; the job itself never runs again."""

import json
import os

from reprokit.bisect.capture_folder import CapturedFailure
from reprokit.bisect.from_capture import GraphBisector
from unit.fakes import BUG, Events, FakeRunner, failed, hung, options, passed


def captured(root: str, kind: str = "exception", signature: dict | None = None) -> CapturedFailure:
    """Rank 0's graph 2 (of 3), captured failing, with its compile arguments and code."""
    case = os.path.join(root, "rank0", "case")
    os.makedirs(case)
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump({"compile_args": {"backend": "inductor"}}, f)
    with open(os.path.join(case, "graph.py"), "w") as f:
        f.write("def forward(x): return x.relu()\n")
    failure = {"kind": kind, "signature": signature or BUG.to_dict(), "graph": 2, "graphs_seen": 3}
    return CapturedFailure(root=root, rank="0", case=case, failure=failure, summary={})


def graph_bisector(answer, capture: CapturedFailure) -> GraphBisector:
    return GraphBisector(options(subsystems=False), FakeRunner(answer), Events(), capture, capture.case)


def failing_from(*stages: str):
    return lambda spec: (failed if spec.stage in stages else passed)(trial_dir=f"/t/{spec.stage}")


def test_the_first_stage_failing_the_graph_is_named_with_the_capture_it_came_from(tmp_path):
    capture = captured(str(tmp_path))
    b = graph_bisector(failing_from("inductor"), capture)
    isolation = b.isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("inductor", "aot_eager_decomp_partition")
    assert (isolation.graph, isolation.graph_count, isolation.capture) == (2, 3, {"from": str(tmp_path), "rank": "0"})
    assert (isolation.user_backend, isolation.graph_code) == ("inductor", "def forward(x): return x.relu()\n")
    assert [row["stage"] for row in isolation.ladder] == [
        "eager",
        "aot_eager",
        "aot_eager_decomp_partition",
        "inductor",
    ]
    assert isolation.deferred == ("torch_logs",) and isolation.hang_limit is None
    assert isolation.decisive_trials == {
        "first_failing": "/t/inductor",
        "last_passing": "/t/aot_eager_decomp_partition",
    }
    assert isolation.message == "from a capture (rank 0, graph 2): no run of the job"
    assert all(spec.mode == "graph" and spec.case == capture.case for spec in b.runner.asked)


def test_a_graph_failing_run_eagerly_is_no_compiler_bug_and_nothing_is_narrowed(tmp_path):
    isolation = graph_bisector(failing_from(*("eager", "aot_eager", "inductor")), captured(str(tmp_path))).isolate()
    assert isolation.failing_stage is None and isolation.decisive_trials == {} and isolation.deferred == ()
    assert isolation.message.startswith("the captured graph fails the same way run eagerly (rank 0, graph 2)")


def test_a_graph_that_passes_replayed_alone_says_what_settles_it(tmp_path):
    isolation = graph_bisector(lambda spec: passed(), captured(str(tmp_path))).isolate()
    assert isolation.failing_stage is None
    assert isolation.message.endswith("run `reprokit bisect script.py` on the job's hardware to settle it")


def test_a_captured_hang_is_judged_by_the_limit_each_trial_ran_under(tmp_path):
    capture = captured(str(tmp_path), kind="hang", signature={"kind": "hang"})
    isolation = graph_bisector(lambda spec: hung() if spec.stage == "inductor" else passed(), capture).isolate()
    assert isolation.hang_limit == {"seconds": 600.0, "why": "the limit each trial was judged by"}
    assert isolation.failing_stage == "inductor"
