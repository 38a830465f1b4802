"""The plain ladder's answer (bisect/plain.py) from Outcomes built from a table: no torch compile. And the runs as
written through the Runner: small scripts without torch, journaled so a resumed run asks none of them again."""

import dataclasses
import types

import pytest

from reprokit.bisect import plain
from reprokit.data import signature as sig
from reprokit.data.records import Outcome, StageResult
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict
from reprokit.errors import NothingToIsolate
from reprokit.report.summary import summary
from reprokit.trial.runner import Runner

WRONG = Signature("exception", "AssertionError", "tensor([N., N.])", None)
OTHER = Signature("exception", "RuntimeError", "out of cheese", None)
ENDS = {"pass": sig.PASS, "wrong": WRONG, "other": OTHER, "hang": sig.HANG}
PROBE_IGNORED = "ignored"
SWITCH_WORDS = "torch's backend switch does not reach this script's compile calls"


def outcome(end: str, traceback: str = "") -> Outcome:
    kind = {"pass": "pass", "hang": "hang"}.get(end, "exception")
    return Outcome(kind=kind, signature=ENDS[end], seconds=1.0, traceback=traceback, trial_dir="/run/plain/x")


def ladder(*ends: str) -> list[StageResult]:
    """The five stages' results, none to inductor, as the plain runs ended."""
    return [
        StageResult(stage, outcome(end).kind, ENDS[end].short(), 1.0, ENDS[end].matches(WRONG) and end != "pass")
        for stage, end in zip(plain.PLAIN_STAGES, ends, strict=True)
    ]


def probe(honoured: bool = True) -> Outcome:
    if not honoured:
        return outcome("wrong")  # the unknown backend never reached: the script failed its own way
    return Outcome(
        kind="exception",
        signature=Signature("exception", "InvalidBackend", "Invalid backend: 'reprokit_no_such_backend', see", None),
        seconds=1.0,
        traceback="torch._dynamo.exc.InvalidBackend: Invalid backend: 'reprokit_no_such_backend'",
    )


def session(ranks: int = 1, **kw) -> types.SimpleNamespace:
    opts = types.SimpleNamespace(script="/work/train.py", cwd="/work", argv=["--lr", "3e-4"], ranks=ranks)
    return types.SimpleNamespace(opts=opts, **kw)


def finding(ends, honoured=True, user_backend=None) -> dict:
    original = dataclasses.replace(outcome("wrong"), user_backend=user_backend)
    return plain.plain_finding(session(), original, ladder(*ends), probe(honoured))


def test_a_script_that_fails_the_same_way_with_dynamo_off_has_nothing_to_isolate():
    with pytest.raises(NothingToIsolate) as e:
        finding(["wrong", "wrong", "wrong", "wrong", "wrong"])
    assert str(e.value) == (
        "the script fails without compile too in the same way (run as written with TORCHDYNAMO_DISABLE=1): "
        "that is not a compiler bug"
    )


@pytest.mark.parametrize(
    ("ends", "honoured", "backend", "stages", "summary"),
    [
        (
            ["pass", "wrong", "wrong", "wrong", "wrong"],
            True,
            None,
            ("eager", "none"),
            "it fails from dynamo (backend=eager) on and passes with eager (no compile)",
        ),
        (
            ["pass", "pass", "pass", "wrong", "wrong"],
            True,
            "inductor",
            ("aot_eager_decomp_partition", "aot_eager"),
            "it fails from aot_eager_decomp_partition on and passes with aot_eager",
        ),
        (
            ["pass", "pass", "pass", "pass", "pass"],
            True,
            "my_backend",
            (None, None),
            "no stage torch swaps in fails the same way; only the script's own backend does",
        ),
        (
            ["pass", "pass", "pass", "pass", "pass"],
            True,
            None,
            (None, None),
            "the plain runs contradict each other: the script fails run as written with inductor, its backend, but "
            "not with torch's inductor swapped in (passes): no stage is claimed",
        ),
        (
            ["pass", "other", "other", "other", "other"],
            True,
            None,
            (None, None),
            "the plain runs contradict each other: the script fails run as written with inductor, its backend, but "
            "not with torch's inductor swapped in (RuntimeError: out of cheese): no stage is claimed",
        ),
        (
            ["pass", "wrong", "wrong", "wrong", "wrong"],
            False,
            None,
            (None, None),
            "torch's backend switch does not reach this script's compile calls (a run with "
            "TORCH_BISECT_BACKEND=reprokit_no_such_backend did not fail on it): no stage is claimed",
        ),
    ],
)
def test_the_plain_ladders_answer(ends, honoured, backend, stages, summary):
    found = finding(ends, honoured, backend)
    assert (found["failing_stage"], found["last_passing_stage"]) == stages
    assert plain.plain_summary(found) == summary
    assert found["backend_switch"] == ("honoured" if honoured else PROBE_IGNORED)
    assert found["command"] == "python train.py --lr 3e-4"


def test_the_command_reported_is_the_one_that_ran():
    s = session(ranks=2)
    assert plain.command_line(s) == "torchrun --standalone --nproc-per-node=2 train.py --lr 3e-4"
    assert plain.launcher(s)[2:] == ("--standalone", "--nproc-per-node=2")


@pytest.mark.parametrize(
    ("ends", "claimed", "words"),
    [
        (["wrong", "wrong"], True, "AssertionError: tensor([N., N.]) (2 of 2 failing)"),
        (["wrong", "pass"], False, "AssertionError: tensor([N., N.]); passes (1 of 2 failing)"),
        (["wrong", "other"], False, "AssertionError: tensor([N., N.]); RuntimeError: out of cheese (2 of 2 failing)"),
        (
            ["hang", "hang"],
            False,
            "hang: timed out (0 of 2 failing); a run killed at the time limit is not counted as a failure",
        ),
        (["pass"], False, "passes"),
        ([], False, "not run (the budget was spent)"),
    ],
)
def test_the_runs_as_written_claim_a_failure_at_two_of_two(ends, claimed, words):
    runs = [outcome(e) for e in ends]
    assert (plain.same_failure(runs) is not None, plain.as_written_words(runs)) == (claimed, words)


def run_session(tmp_path, text: str, timeout: float = 30) -> types.SimpleNamespace:
    (tmp_path / "script.py").write_text(text)
    (tmp_path / "run").mkdir(exist_ok=True)
    runner = Runner(RunDir(str(tmp_path / "run")), timeout=timeout, jobs=2)
    notes: list = []
    s = session(runner=runner, baseline=outcome("pass"), script_hash="h", emit=lambda _k, **kw: notes.append(kw))
    s.opts = types.SimpleNamespace(script=str(tmp_path / "script.py"), cwd=str(tmp_path), argv=[], ranks=1)
    s.notes = notes
    return s


def test_the_runs_as_written_are_trials_of_the_runner_journaled_and_reused_on_resume(tmp_path):
    s = run_session(tmp_path, "assert 2 == 3, 'wrong'\n")
    found = plain.hidden_failure(s, outcome("pass"))
    assert (found.kind, found.signature.short(), s.runner.executed) == ("exception", "AssertionError: wrong", 2)
    assert [x["kind"] for x in s.runner.run_dir.journal()] == ["plain", "plain"]
    assert (tmp_path / "run" / "plain" / "as-written-2" / "stderr.txt").exists()
    again = run_session(tmp_path, "assert 2 == 3, 'wrong'\n")
    assert plain.hidden_failure(again, outcome("pass")).signature == found.signature
    assert again.runner.executed == 0  # --resume: both answers from the journal


def test_a_run_as_written_that_hangs_is_not_the_failure(tmp_path):
    s = run_session(tmp_path, "import time\ntime.sleep(60)\n", timeout=2)
    assert plain.hidden_failure(s, outcome("pass")) is None
    assert [x.kind for x in s.as_written] == ["hang"]  # one limit waited out, not two
    assert s.notes[-1]["text"] == (
        "the script run as written (python script.py): hang: timed out; a run killed at the time limit is not counted "
        "as a failure"
    )


def test_a_passing_script_runs_once_as_written(tmp_path):
    s = run_session(tmp_path, "print('ok')\n")
    assert plain.hidden_failure(s, outcome("pass")) is None
    assert (s.runner.executed, s.notes[-1]["text"]) == (1, "the script run as written (python script.py): passes")


def test_issue_md_claims_no_stage_when_the_plain_runs_leave_a_doubt():
    found = finding(["pass", "wrong", "wrong", "wrong", "wrong"], honoured=False)
    v = Verdict.from_dict(
        dict(
            script="/work/train.py",
            argv=[],
            kind="exception",
            signature=WRONG.to_dict(),
            plain_run=found,
            failing_stage="inductor",
        )
    )
    said = summary(v, brief=True)
    assert said == (
        "`torch.compile` raises (AssertionError: tensor([N., N.])) in `train.py`. Reprokit's instrumentation hides "
        "this failure: it shows when the script runs as written (`python train.py --lr 3e-4`) and not under "
        "reprokit's router, so the stages were asked by plain runs of the script with torch.compile's backend "
        f"swapped by torch itself (TORCH_BISECT_BACKEND); {SWITCH_WORDS} (a run with "
        "TORCH_BISECT_BACKEND=reprokit_no_such_backend did not fail on it): no stage is claimed. Not asked: which "
        "graph fails, graph capture and a minified repro.py, inductor config flips, torch's pass and lowering "
        "counters (each needs reprokit's router, which hides the failure)."
    )
