"""bisect's minify step as the pipeline calls it once (app/minify.minify_phase): asked or not, and what it says."""

from __future__ import annotations

import dataclasses

from reprokit.app.minify import SLOW_REASON, Minified, minify_phase, refusal
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir

FAILING = Isolation(script="/w/train.py", failing_stage="inductor", kind=OutcomeKind.EXCEPTION, graph_case="/w/case")


FACTS = RunFacts(python="/usr/bin/python3", options={"cwd": "/w"})


def minify(tmp_path, isolation: Isolation, wanted: bool = True, spent: bool = False) -> tuple[Minified, list]:
    """(the step's result, the events it said); no runner: none of these cases may ask a trial."""
    said: list = []
    run = RunDir.create(str(tmp_path), "train")
    result = minify_phase(
        run,
        isolation,
        FACTS,
        None,
        lambda e, **k: said.append((e, k)),
        wanted,
        spent,
        "",  # type: ignore[arg-type]
    )
    return result, said


def test_a_slowdown_is_not_minified_and_says_why(tmp_path):
    slow = Isolation(script="/w/train.py", failing_stage="inductor", kind=OutcomeKind.SLOW, graph_case="/w/case")
    assert minify(tmp_path, slow) == (
        Minified(case="/w/case"),
        [(Event.NOTE, {"text": "not minified: " + SLOW_REASON})],
    )


def test_a_spent_budget_leaves_minify_unasked_and_says_nothing(tmp_path):
    assert minify(tmp_path, FAILING, spent=True) == (Minified(case="/w/case", unasked=True), [])


def test_no_minify_asked_or_no_failing_stage_asks_nothing(tmp_path):
    assert minify(tmp_path / "a", FAILING, wanted=False) == (Minified(case="/w/case"), [])
    assert minify(tmp_path / "b", Isolation(script="/w/train.py")) == (Minified(), [])


def test_the_graph_an_earlier_minify_captured_is_the_one_the_evidence_asks(tmp_path):
    run = RunDir.create(str(tmp_path), "train")
    # minify.json of an earlier `reprokit minify` of this folder, as a resumed bisect reads it at its start
    facts = dataclasses.replace(FACTS, minified={"case": "/w/run/capture/case"})
    result = minify_phase(run, FAILING, facts, None, lambda *a, **k: None, False, False, "")  # type: ignore[arg-type]
    assert result.case == "/w/run/capture/case"


def test_a_flaky_failure_too_rare_to_ask_each_cut_is_refused_with_its_rate():
    # what `reprokit minify RUN_DIR` says after "not minified: " (the end-to-end case is opt-in: tests/test_cli.py)
    rare = dataclasses.replace(FAILING, flaky=True, repro_rate=0.25, flaky_tries=None)
    assert refusal(rare) == (
        "the failure is flaky (it reproduced in 25% of runs), too rarely to ask each cut until it fails"
    )
    assert refusal(dataclasses.replace(rare, flaky_tries=3)) is None  # asked until it fails: minified
