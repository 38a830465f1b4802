"""The source minifier: texts of the script, each kept only while it fails the same way compiled and passes
without compile, cut down by the source passes."""

from reprokit.search.fixpoint import run_passes
from reprokit.source.reduce import SOURCE_PASSES
from unit.fakes import OTHER, failed, passed, source_minifier, source_of

SCRIPT = """import torch


def helper(x):
    return x + 1


def bad(x):
    return x.view(-1, 5)


x = torch.ones(4)
y = helper(x)
print("before", y)
out = torch.compile(bad)(y)
print("after", out)
"""


def dynamo_raises_on_view(spec):
    """Compiled, a script calling torch.compile on a function that views fails; without compile it passes."""
    text = source_of(spec)
    if spec.stage == "none":
        return passed()
    return failed() if "torch.compile(" in text and ".view(" in text else passed()


def test_the_script_is_cut_to_what_the_failure_needs_each_accepted_text_shorter(tmp_path):
    # (One reduction for both rules: each candidate is a file written with fsync, some 10 ms.)
    problem, _ = source_minifier(dynamo_raises_on_view, SCRIPT, str(tmp_path))
    best = run_passes(problem, SOURCE_PASSES)
    assert "print" not in best and "helper" not in best
    assert "torch.compile(" in best and ".view(" in best
    assert (tmp_path / "repro.py").read_text() == best  # every improvement is the repro so far
    sizes = [problem.size(text) for text in problem.accepted]  # characters first, then integer literals
    assert sizes == sorted(set(sizes), reverse=True)


def test_a_candidate_failing_the_same_way_without_compile_too_is_refused(tmp_path):
    def answer(spec):
        # Cutting the compiled call leaves a script whose own check fails the same way with compile off.
        if "torch.compile(" not in source_of(spec):
            return failed()
        return dynamo_raises_on_view(spec)

    problem, _ = source_minifier(answer, SCRIPT, str(tmp_path))
    assert "torch.compile(" in run_passes(problem, SOURCE_PASSES)


def test_a_candidate_failing_another_way_is_refused(tmp_path):
    def answer(spec):
        if "helper" not in source_of(spec) and spec.stage != "none":
            return failed(OTHER)
        return dynamo_raises_on_view(spec)

    problem, _ = source_minifier(answer, SCRIPT, str(tmp_path))
    best = run_passes(problem, SOURCE_PASSES)
    assert "helper" in best and "print" not in best
