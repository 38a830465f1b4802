"""The fake-tensor check of graph cuts (issue #32): a cut that cannot run is refused without a trial, and only such
a cut. The graph is a real one, captured as Dynamo hands it to a backend: two blocks that scale their linear layer's
output in place through a view, then relu. Cut into an input, that output is a leaf that requires grad, and writing
into a view of it raises before anything compiles."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.fx.graphcase import GraphShape
from reprokit.minify.graph import GraphOracle
from reprokit.trial.precheck import FakeCheck
from reprokit.trial.runner import Runner

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEAF_ERROR = "RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place operation."
PLANTED = {"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    folder = tmp_path_factory.mktemp("precheck") / "case"
    code = textwrap.dedent(f"""
        import torch
        from reprokit.fx.capture import capture_graph

        class Block(torch.nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.lin = torch.nn.Linear(dim, dim)

            def forward(self, x):
                h = self.lin(x)
                h.view(-1).mul_(0.5)
                return h + x

        def backend(gm, inputs):
            capture_graph(gm, inputs, {str(folder)!r}, max_input_bytes=1 << 20, compile_args={{}})
            return gm.forward

        torch.manual_seed(0)
        torch.compile(torch.nn.Sequential(Block(8), Block(8), torch.nn.ReLU()), backend=backend)(torch.randn(4, 8))
    """)
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": REPO})
    return str(folder)


def shape_of(case):
    with open(os.path.join(case, "meta.json")) as f:
        return GraphShape.from_meta(json.load(f))


def cutting(shape, name):
    """The whole graph with one node cut into an input (fed its eager value)."""
    whole = shape.original()
    return shape.keep_computed(whole, [n for n in shape.cuttable(whole) if n != name])


def test_a_cut_that_cannot_run_is_refused_and_one_that_can_is_not(case, tmp_path):
    shape = shape_of(case)
    check = FakeCheck(case, str(tmp_path / "cache"), str(tmp_path / "precheck"))
    try:
        assert check.refusal(shape.original().to_dict()) is None
        assert check.refusal(cutting(shape, "input_1").to_dict()) is None  # the first block's sum: runs
        assert check.refusal(cutting(shape, "h").to_dict()) == LEAF_ERROR  # the first linear's output
        assert check.refusal(cutting(shape, "h_1").to_dict()) == LEAF_ERROR
        assert (check.asked, check.refused, check.unusable) == (4, 2, None)
    finally:
        check.close()
    assert check.proc.poll() is not None  # no checker outlives its minify


def test_a_graph_that_does_not_run_on_fakes_judges_no_cut(case, tmp_path):
    """When the whole graph fails on fakes (here: an input recorded with the wrong width), the check cannot tell a
    cut that cannot run from the graph itself: every cut gets its trial."""
    broken = tmp_path / "broken"
    subprocess.run(["cp", "-r", case, str(broken)], check=True)
    meta = json.loads((broken / "meta.json").read_text())
    x = next(m for m in meta["inputs"] if m["kind"] == "tensor" and m["shape"] == [4, 8])
    x["shape"], x["stride"] = [4, 5], [5, 1]
    (broken / "meta.json").write_text(json.dumps(meta))
    shape = shape_of(str(broken))
    check = FakeCheck(str(broken), str(tmp_path / "cache"), str(tmp_path / "precheck"))
    try:
        assert check.refusal(cutting(shape, "h").to_dict()) is None
        assert check.unusable.startswith("the whole graph does not run on fake tensors (RuntimeError: ")
        assert check.asked == 0
    finally:
        check.close()


@pytest.mark.slow
def test_the_check_refuses_only_what_a_trial_would_fail_another_way(case, tmp_path):
    """Graph trials of the real compiler decide first: the cut the check refuses fails another way as a trial
    (Dynamo's fake-tensor run), the one it lets through fails the planted way. Once a trial has failed another way,
    the check is armed, and the next cut that cannot run costs no trial."""
    shape = shape_of(case)
    runner = Runner(RunDir.create(str(tmp_path), "precheck"), timeout=300)
    check = FakeCheck(case, runner.cache_root, str(tmp_path / "precheck"))
    try:
        original = runner(TrialSpec(mode="graph", stage="inductor", case=case, config=PLANTED, label="graph-alone"))
        assert original.signature.short().startswith("InductorError: CppCompileError"), original
        oracle = GraphOracle(runner, shape, case, "inductor", original.signature, False, False, precheck=check)
        oracle.spec = lambda edit: TrialSpec(
            mode="graph",
            stage="inductor",
            case=case,
            edit=edit.to_dict(),
            config=PLANTED,
            label=f"minify-{shape.size(edit)}n",
        )
        assert not oracle.armed
        assert oracle.fails_same(cutting(shape, "h")) is False  # a trial: it failed another way
        assert oracle.armed and check.proc is None and runner.executed == 2
        assert oracle.refused[0]["signature"]["exc_type"] == "TorchRuntimeError"
        assert oracle.refused[0]["signature"]["message"].startswith("RuntimeError when making fake tensor call")
        assert oracle.fails_same(cutting(shape, "h_1")) is False  # no trial: refused on fakes
        assert runner.executed == 2 and [p["why"] for p in oracle.prechecked] == [LEAF_ERROR]
        assert oracle.fails_same(cutting(shape, "input_1")) is True  # checked, then a trial: the planted failure
        assert runner.executed == 3 and check.asked == 2
    finally:
        check.close()
        runner.close()
