"""The whole run's time plan (minify/plan.py): without --budget, each repro phase's share of time ends where what
must still run after it would carry the run past 5 minutes, and never under a floor; a --budget rules instead."""

import os
import time

from reprokit.data.budget import Budget
from reprokit.data.rundir import RunDir
from reprokit.fx.graphcase import Edit
from reprokit.minify.graph import GraphOracle, graph_problem, reduce_graph
from reprokit.minify.plan import whole_run_plan
from reprokit.search import Plan, Share
from reprokit.search.fixpoint import run_passes
from reprokit.source.reduce import SOURCE_PASSES, reduction_share, source_problem
from unit.fakes import BUG, FakeRunner, chain_graph, edit_of, failed, passed, source_of, verdict


def source_share_at(seconds_into_run: float, script_seconds: float) -> float | None:
    """The seconds the source reduction gets when it starts that far into a run whose script takes that long."""
    share = Share(reduction_share, clock=lambda: seconds_into_run, plan=whole_run_plan(0.0, None))
    share.start(script_seconds)
    return share.given


def test_the_source_reduction_gets_what_is_left_of_five_minutes_less_ten_runs_after_it():
    assert source_share_at(20.0, 1.0) == 220.0  # 300 - 20 - 10 * (5 + 1)
    assert source_share_at(100.0, 8.0) == 70.0  # 300 - 100 - 10 * (5 + 8), not forty runs of the script
    assert source_share_at(200.0, 2.0) == 60.0  # 300 - 200 - 70 is 30: the floor


def test_a_budget_rules_instead_and_a_minify_alone_keeps_each_phases_own_share():
    assert whole_run_plan(10.0, Budget(seconds=600.0, started=10.0)) is None
    assert whole_run_plan(None, None) is None


def past_its_end() -> Plan:
    """A plan whose end has passed and whose floor is nothing: a share under it is spent once given."""
    return Plan(end=time.monotonic() - 1000.0, floor=0.0)


SCRIPT = """import torch
x = torch.ones(4)
print('before', x)
out = torch.compile(lambda t: t.view(-1, 5))(x)
print('after', out)
"""  # as minify_source hands it on: re-printed from its AST


def test_the_plan_in_the_runners_policy_ends_the_source_reduction_after_the_scripts_first_run(tmp_path):
    def answer(spec):
        return passed() if spec.stage == "none" or ".view(" not in source_of(spec) else failed()

    run = RunDir(str(tmp_path))
    run.write_json("run.json", {"options": {"cwd": str(tmp_path)}})
    runner = FakeRunner(answer).with_policy(plan=past_its_end())
    v = verdict(signature=BUG.to_dict(), failing_stage="eager").isolation
    problem = source_problem(run, v, runner, SCRIPT, cwd=str(tmp_path))
    assert problem.test(SCRIPT)
    assert run_passes(problem, SOURCE_PASSES) == SCRIPT
    assert [s.stage for s in runner.asked] == ["eager", "none"]  # the script and its run without compile alone


def test_the_plan_in_the_runners_policy_ends_the_graph_minify_after_its_first_batch(tmp_path):
    shape = chain_graph("add", "mul", "relu", "sum", "neg")
    runner = FakeRunner(lambda spec: failed() if "relu_2" in edit_of(spec).computed else passed())
    oracle = GraphOracle(
        runner.with_policy(plan=past_its_end()),  # type: ignore[arg-type]
        shape,
        "case",
        "inductor",
        BUG,
        check_accuracy=False,
        run_backward=False,
    )
    os.makedirs(tmp_path / "run")
    problem = graph_problem(oracle, shape.original(), RunDir(str(tmp_path / "run")), lambda *a, **k: None)
    reduce_graph(problem, shape, width=runner.jobs)
    assert oracle.share.ran_out and oracle.share.given == 0.0
    assert 1 <= len(runner.asked) <= runner.jobs  # one batch of cuts, which gave the share; none after it


def test_no_candidate_of_a_batch_starts_once_the_share_is_spent(tmp_path):
    """A batch of candidates is not run out past the share's end: #188422's last batch took its 60 s share 32 s over."""
    now = [0.0]

    def answer(spec):
        now[0] += 4.0  # each trial takes 4 s on the share's clock
        if spec.stage == "none":
            return passed()
        return failed() if source_of(spec).count("\n") > 13 else passed()  # no cut fails: each batch runs out

    script = "".join(f"x{i} = {i}\n" for i in range(14))
    run = RunDir(str(tmp_path))
    run.write_json("run.json", {"options": {"cwd": str(tmp_path)}})
    runner = FakeRunner(answer, jobs=1)
    v = verdict(signature=BUG.to_dict(), failing_stage="eager").isolation
    share = Share(lambda seconds: 10.0, clock=lambda: now[0])
    problem = source_problem(run, v, runner, script, share=share, cwd=str(tmp_path))
    assert problem.test(script)  # the share starts as the script's first run answers (at 4 s): it ends at 14 s
    assert problem.first_failing([script.replace(f"x{i} = {i}\n", "") for i in range(14)]) is None
    assert share.ran_out and now[0] == 16.0  # two candidates started by then, none of the other 12


def test_no_cut_of_a_batch_starts_once_the_graph_share_is_spent():
    shape = chain_graph("add", "mul", "relu", "sum", "neg")
    names = [n.name for n in shape.nodes[1:]]
    now = [0.0]

    def answer(spec):
        now[0] += 4.0
        return passed()

    runner = FakeRunner(answer, jobs=1)
    oracle = GraphOracle(runner, shape, "case", "inductor", BUG, check_accuracy=False, run_backward=False)  # type: ignore[arg-type]
    oracle.share = Share(lambda seconds: 6.0, clock=lambda: now[0])
    # the graph's prefixes, each a different cut: 15 of them
    edits = [Edit(frozenset(names[j : k + 1]), frozenset(), (names[k],)) for j in range(5) for k in range(j, 5)]
    assert oracle.first_failing(edits[:3]) is None and now[0] == 12.0  # the first batch runs whole: it gives the share
    assert oracle.first_failing(edits[3:9]) is None and now[0] == 20.0  # 12 + 6 = 18: two cuts start by then


def test_the_plan_counts_from_the_start_of_a_run_whose_trials_run_here_alone():
    """Cluster jobs each wait on the scheduler: under --executor slurm no plan cuts the repro phases."""
    from reprokit.app.common import local_start
    from reprokit.data.executor import ExecutorSettings

    assert local_start(12.5, None) == 12.5
    assert local_start(12.5, ExecutorSettings(name="local")) == 12.5
    assert local_start(12.5, ExecutorSettings(name="slurm", partition="debug")) is None
