"""The stage ladder, through the Bisector's whole search: the first stage that fails the original's way is named,
with the last that passed before it; a stage that failed another way is asked again."""

import pytest

from reprokit.data.records import Outcome, Signature
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.trial.outcome import SCHEDULER_ENDED
from unit.fakes import BUG, OTHER, bisector, events_of, failed, hung, original, passed, runner_of

FAILS_FROM_DECOMP = ("aot_eager_decomp_partition", "inductor")


def ladder_table(failing_stages=FAILS_FROM_DECOMP, graphs=1, **original_kw):
    """The script: passes without compile and under each stage before `failing_stages`, fails with BUG from there."""

    def answer(spec):
        if spec.stage == "none":
            return passed()
        if spec.stage == "user":
            return original(graphs=graphs, **original_kw)
        return failed(graphs=graphs) if spec.stage in failing_stages else passed(graphs=graphs)

    return answer


def test_the_first_failing_stage_and_the_last_passing_one_are_named():
    isolation = bisector(ladder_table(), subsystems=False, configs=False).isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("aot_eager_decomp_partition", "aot_eager")


def test_every_stage_after_none_is_asked_once_side_by_side_and_the_inductor_stage_is_the_original():
    b = bisector(ladder_table(), subsystems=False, configs=False)
    isolation = b.isolate()
    assert [row["stage"] for row in isolation.ladder] == [
        "eager",
        "aot_eager",
        "aot_eager_decomp_partition",
        "inductor",
    ]
    assert [row["same"] for row in isolation.ladder] == [False, False, True, True]
    stage_trials = [label for label in runner_of(b).labels() if label.startswith("stage-")]
    assert sorted(stage_trials) == ["stage-aot_eager", "stage-aot_eager_decomp_partition", "stage-eager"]


def test_an_inductor_only_failure_names_inductor_after_the_decomposing_stage():
    isolation = bisector(ladder_table(("inductor",)), subsystems=False, configs=False).isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("inductor", "aot_eager_decomp_partition")
    assert isolation.decisive_trials is not None and "first_failing" in isolation.decisive_trials


def test_a_failure_in_the_users_own_backend_when_every_stock_stage_passes():
    isolation = bisector(ladder_table((), user_backend="my_backend"), subsystems=False, configs=False).isolate()
    assert isolation.failing_stage == "my_backend"
    assert isolation.last_passing_stage == "inductor"
    assert "every stock stage passes" in isolation.message


def test_a_stage_that_failed_another_way_once_is_asked_again_and_called_flaky():
    answer = ladder_table()

    def flaky_aot_eager(spec):
        if spec.stage == "aot_eager" and spec.attempt == 0:
            return failed(OTHER)
        return answer(spec)

    b = bisector(flaky_aot_eager, subsystems=False, configs=False)
    isolation = b.isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("aot_eager_decomp_partition", "aot_eager")
    assert isolation.unsteady.startswith("stage aot_eager is flaky: it failed with ValueError: shape mismatch")
    assert runner_of(b).labels().count("stage-aot_eager") == 2


def test_a_stage_broken_another_way_every_time_is_asked_twice_then_kept_as_another_bug():
    answer = ladder_table()
    b = bisector(lambda spec: failed(OTHER) if spec.stage == "aot_eager" else answer(spec), subsystems=False)
    isolation = b.isolate()
    # The second run failed exactly as the first: a steady failure of its own, no third run.
    assert runner_of(b).labels().count("stage-aot_eager") == 2
    assert isolation.unsteady == ""  # only a run that came right, or hung each time, is said to be unsteady
    assert isolation.failing_stage == "aot_eager_decomp_partition"
    assert isolation.other_failures and isolation.other_failures[0]["signature"]["exc_type"] == "ValueError"


def test_a_stage_after_the_failing_one_that_fails_another_way_is_not_asked_again():
    answer = ladder_table(user_backend="my_backend")
    b = bisector(lambda spec: failed(OTHER) if spec.stage == "inductor" else answer(spec))
    b.isolate()
    assert runner_of(b).labels().count("stage-inductor") == 1


def test_a_script_that_fails_without_compile_the_same_way_has_nothing_to_isolate():
    answer = ladder_table()
    with pytest.raises(NothingToIsolate, match="fails without compile too in the same way"):
        bisector(lambda spec: failed() if spec.stage == "none" else answer(spec)).isolate()


def test_a_script_that_never_calls_torch_compile_is_refused():
    with pytest.raises(ReprokitError, match="train.py never calls torch.compile"):
        bisector(ladder_table(compiled=False)).isolate()


def test_a_script_run_the_cluster_gave_no_answer_for_is_said_so_not_never_compiled():
    # A job FAILED twice before its trial answered (trial/slurm.py): the CI at 8cfeff2 said "never calls torch.compile"
    note = f"{SCHEDULER_ENDED}: job 790 FAILED, then job 791 FAILED; not the failure"
    ended = Outcome(
        kind="skip", signature=Signature("skip", None, note, None), seconds=0.0, trial_dir="/r/o", note=note
    )
    answer = ladder_table()
    with pytest.raises(ReprokitError) as raised:
        bisector(lambda spec: ended if spec.stage == "user" else answer(spec)).isolate()
    assert str(raised.value) == (
        "the cluster gave no answer for train.py run as written (job 790 FAILED, then job 791 FAILED; its trial "
        "folder: /r/o): check the cluster, then run again"
    )


def test_the_stage_results_are_reported_as_events_in_ladder_order():
    b = bisector(ladder_table(), subsystems=False, configs=False)
    b.isolate()
    stages = [fields["stage"] for name, fields in events_of(b).seen if name == "stage"]
    assert stages == ["none", "eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]


def test_a_graph_calling_a_custom_op_adds_the_fake_kernel_check_to_the_ladder(tmp_path):
    graphs = tmp_path / "original" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "graph_0.py").write_text("y = torch.ops.mylib.scale.default(x)\nz = torch.ops.aten.relu.default(y)\n")
    isolation = bisector(ladder_table(trial_dir=str(tmp_path / "original")), subsystems=False, configs=False).isolate()
    assert [row["stage"] for row in isolation.ladder][-2:] == ["aot_eager_decomp_partition_crossref", "inductor"]


def test_a_fake_kernel_disagreeing_before_the_compiled_failure_is_the_finding_and_the_failure_chased(tmp_path):
    graphs = tmp_path / "original" / "graphs"
    graphs.mkdir(parents=True)
    (graphs / "graph_0.py").write_text("y = torch.ops.mylib.scale.default(x)\n")
    mismatch = Signature(kind="exception", exc_type="MetadataMismatchError", message="meta says float32")
    traceback = (
        "When comparing the output of mylib.scale.default on FakeTensor and concrete Tensors, found mismatched "
        "tensor metadata: dtype mismatch float32 vs float16\n"
    )
    crossref = failed(mismatch, traceback=traceback, trial_dir="/t/crossref")
    table = ladder_table(failing_stages=("inductor",), trial_dir=str(tmp_path / "original"))
    b = bisector(
        lambda spec: crossref if spec.stage.endswith("_crossref") else table(spec), subsystems=False, configs=False
    )
    isolation = b.isolate()
    assert (isolation.failing_stage, isolation.last_passing_stage) == (
        "aot_eager_decomp_partition_crossref",
        "aot_eager_decomp_partition",
    )
    assert isolation.meta_kernel == {
        "op": "mylib.scale.default",
        "mismatch": "dtype mismatch float32 vs float16",
        "compiled_failure": BUG.short(),
        "trial": "/t/crossref",
    }
    assert (isolation.kind, isolation.signature) == ("exception", mismatch.to_dict()) and b.target == mismatch
    assert isolation.message.startswith("the crossref stage fails first: the fake (meta) kernel of mylib.scale.default")


def test_dynamo_hanging_before_any_graph_asks_its_own_stage_alone():
    def answer(spec):
        if spec.stage == "none":
            return passed()
        if spec.stage == "user":
            return hung(compiled=True, graphs=0, user_backend="inductor")
        return hung(compiled=True) if spec.stage == "eager" else passed()

    b = bisector(answer, subsystems=False, configs=False)
    isolation = b.isolate()
    assert [row["stage"] for row in isolation.ladder] == ["eager"]
    assert (isolation.failing_stage, isolation.last_passing_stage) == ("eager", "none")


def test_a_compile_that_hangs_bounds_every_later_trials_compile():
    def answer(spec):
        if spec.stage == "none":
            return passed()
        if spec.stage == "user":
            return hung(compiled=True, graphs=1, user_backend="inductor", seconds=300.0, longest_compile=2.0)
        return hung(compiled=True, graphs=1) if spec.stage == "inductor" else passed(graphs=1)

    b = bisector(answer, subsystems=False, configs=False)
    isolation = b.isolate()
    assert isolation.hang_limit is not None and isolation.failing_stage == "inductor"
    later = [spec for spec in runner_of(b).asked if spec.label.startswith("stage-")]
    assert later and all(spec.compile_limit == isolation.hang_limit["seconds"] for spec in later)
