"""versions judges a release by the script when the repro cannot speak for it (issue #32): the pure decision over
the runs made on one release (versions/check.decide), no network. Measured case: a lowering bug fixed in 2.15.0
whose minimal repro fails there with an index error (the cut graph is not valid there) while the script passes."""

from reprokit.data.records import Outcome
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict
from reprokit.versions import releases
from reprokit.versions.check import decide

LOWERING = Signature("exception", "BackendCompilerFailed", "CppCompileError: C++ compile error", None)
INDEX = Signature("exception", "IndexError", "index N is out of bounds for dimension N with size N", None)
PASS = Signature("pass")
VERDICT = Verdict.from_dict(
    dict(
        script="/project/train.py",
        argv=[],
        kind="exception",
        signature=LOWERING.to_dict(),
        repro_signature=LOWERING.to_dict(),
        repro_verified=True,
    )
)


def ran(sig: Signature, seconds: float = 4.0) -> Outcome:
    return Outcome(kind=sig.kind, signature=sig, seconds=seconds)


def test_a_repro_that_fails_differently_hands_the_release_to_the_script():
    assert decide(VERDICT, repro=ran(INDEX)) == ("plain", None)
    assert decide(VERDICT, repro=ran(INDEX), plain=ran(PASS)) == ("compiled", None)
    step, row = decide(VERDICT, repro=ran(INDEX, 3.0), plain=ran(PASS, 2.0), compiled=ran(PASS, 5.0))
    assert step is None and row["status"] == "passes" and row["mode"] == "script" and row["seconds"] == 10.0
    assert "repro.py fails differently (IndexError" in row["detail"], row
    # The table then says the release fixed it.
    table = [{"release": "2.13.0", "status": "same"}, {"release": "2.15.0", "status": row["status"]}]
    said = releases.conclusions(table, "2.13.0")
    assert said["fixed_in"] == "2.15.0" and said["summary"].startswith("fixed in torch 2.15.0"), said


def test_the_script_failing_the_same_way_or_otherwise_says_so():
    assert decide(VERDICT, repro=ran(INDEX), plain=ran(PASS), compiled=ran(LOWERING))[1]["status"] == "same"
    assert decide(VERDICT, repro=ran(INDEX), plain=ran(PASS), compiled=ran(INDEX))[1]["status"] == "different"
    row = decide(VERDICT, repro=ran(INDEX), plain=ran(INDEX))[1]
    assert row["status"] == "cannot_run" and "without torch.compile" in row["detail"]


def test_a_repro_that_speaks_for_the_release_is_enough():
    assert decide(VERDICT, repro=ran(LOWERING)) == (
        None,
        {"status": "same", "detail": LOWERING.short(), "seconds": 4.0, "mode": "repro.py"},
    )
    assert decide(VERDICT, repro=ran(PASS))[1]["status"] == "passes"


def test_without_a_repro_the_script_decides_as_before():
    assert decide(VERDICT) == ("plain", None)
    assert decide(VERDICT, plain=ran(PASS), compiled=ran(LOWERING))[1] == {
        "status": "same",
        "detail": LOWERING.short(),
        "seconds": 8.0,
        "mode": "script",
    }
