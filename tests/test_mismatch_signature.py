"""An accuracy failure is one failure, however the check reports it (issue #32): a script's comparison that exits,
one that raises from assert_close, one that asserts torch.allclose, and reprokit's own accuracy check all match; an
exit or an AssertionError with no failed comparison before it is another failure. Real trial processes."""

import pytest

from reprokit.data.records import TrialSpec
from reprokit.data.signature import MISMATCH, Signature
from reprokit.trial.launch import run_trial

HEAD = "import sys\nimport torch\na = torch.ones(4)\nb = a + 1\n"
CHECKS = {
    "exits": HEAD + "if not torch.allclose(a, b):\n    print('differs')\n    sys.exit(1)\n",
    "assert_close": HEAD + "torch.testing.assert_close(a, b)\n",
    "asserts_allclose": HEAD + "assert torch.allclose(a, b), 'compiled differs'\n",
    "caught_then_exits": HEAD + "try:\n    torch.testing.assert_close(a, b)\nexcept AssertionError:\n    sys.exit(2)\n",
}
NOT_A_MISMATCH = {
    "plain_exit": HEAD + "assert torch.allclose(a, a)\nsys.exit(1)\n",
    "plain_assert": HEAD + "assert torch.equal(a, a)\nassert len(sys.argv) > 5, 'needs arguments'\n",
    # A program cut so far that it returns None, or another shape: not the wrong values the check reported.
    "none_for_a_tensor": HEAD + "torch.testing.assert_close(None, b)\n",
    "another_shape": HEAD + "torch.testing.assert_close(a[:2], b)\n",
}


def signature_of(tmp_path, name: str, text: str) -> Signature:
    script = tmp_path / f"{name}.py"
    script.write_text(text)
    spec = TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label=name)
    outcome = run_trial(spec, str(tmp_path / f"trial-{name}"), str(tmp_path / "cache"), 120)
    assert outcome.failed, outcome
    return outcome.signature


@pytest.fixture(scope="module")
def signatures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checks")
    return {name: signature_of(folder, name, text) for name, text in {**CHECKS, **NOT_A_MISMATCH}.items()}


def test_every_way_a_check_reports_a_mismatch_is_one_failure(signatures):
    router = Signature("accuracy", None, "compiled output differs from eager", None)
    seen = [signatures[name] for name in CHECKS] + [router]
    assert [s.kind for s in seen[:4]] == ["exit", "exception", "exception", "exit"]
    assert all(s.cause == MISMATCH for s in seen[:4]), seen
    assert all(x.matches(y) for x in seen for y in seen)


def test_an_exit_or_assert_without_a_failed_comparison_is_another_failure(signatures):
    for name in NOT_A_MISMATCH:
        other = signatures[name]
        assert other.cause != MISMATCH, other
        assert not any(signatures[c].matches(other) or other.matches(signatures[c]) for c in CHECKS), name
