"""The phases' results as a user finds them in verdict.json: each written after its phase, plain JSON that loads back
(an older run folder's too), and the Runner's progress callbacks."""

from __future__ import annotations

import dataclasses
import json

import pytest

from reprokit.app.verdict_file import finished, isolated, isolation_of, with_repro, with_run
from reprokit.data.phases import Evidence, Isolation, Repro
from reprokit.data.records import ReproAttempt, TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict

ISOLATION = Isolation(
    script="/w/train.py",
    argv=("--lr", "3e-4"),
    failing_stage="inductor",
    last_passing_stage="aot_eager_decomp_partition",
    kind="exception",
    signature={"kind": "exception", "exc_type": "RuntimeError", "message": "boom"},
    graph=0,
    subsystem={"name": "lowerings", "application": 3},
    decisive_trials={"first_failing": "/t/1"},
    deferred=("confirm", "configs", "torch_logs"),
    trials=12,
    seconds=30.5,
)
REPRO = Repro(
    kind="graph",
    path="/r/repro.py",
    verified=True,
    attempts=(ReproAttempt("graph", "verified"),),
    nodes_before=41,
    nodes_after=2,
    trials=9,
    seconds=20.0,
    message="",
)
EVIDENCE = Evidence(
    asked=("confirm", "configs", "torch_logs"),
    config={"cpp.x": None},
    confirmed=True,
    torch_logs="/t/logs",
    trials=3,
    seconds=4.0,
)


def on_disk(run_dir: RunDir) -> dict:
    return json.loads(open(run_dir.file("verdict.json")).read())


def test_each_phase_is_written_as_it_comes_and_loads_back(tmp_path):
    run_dir = RunDir.create(str(tmp_path), "train")
    verdict = isolated(run_dir, ISOLATION)
    first = on_disk(run_dir)
    assert (first["failing_stage"], first["repro"], first["deferred"]) == (
        "inductor",
        None,
        ["confirm", "configs", "torch_logs"],
    )
    assert isolation_of(Verdict.from_dict(first)) == ISOLATION  # what `reprokit minify RUN_DIR` starts from

    verdict = with_repro(run_dir, verdict, REPRO)
    second = on_disk(run_dir)
    assert second["nodes"] == {"original": 41, "minified": 2} and second["repro_verified"] is True
    assert second["repro_attempts"] == [{"kind": "graph", "result": "verified"}]
    assert dataclasses.replace(Verdict.from_dict(second).repro, message="") == REPRO

    # the bisect's verdict, built once from the phases' results; the pack then names its tarball
    verdict = finished(run_dir, ISOLATION, verdict.repro, EVIDENCE)
    verdict = with_run(run_dir, verdict, tarball="/a/x.tar.gz")
    last = on_disk(run_dir)
    assert last["subsystem"] == {"name": "lowerings", "application": 3, "confirmed": True}
    assert last["config"] == {"cpp.x": None} and last["deferred"] == [] and last["deferred_trials"] == 3
    assert last["decisive_trials"] == {"first_failing": "/t/1", "torch_logs": "/t/logs"}
    assert last["tarball"] == "/a/x.tar.gz"
    assert Verdict.from_dict(last).to_dict() == last == verdict.to_dict()


def test_phase_results_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ISOLATION.failing_stage = "eager"
    with pytest.raises(dataclasses.FrozenInstanceError):
        REPRO.verified = False


def test_an_older_verdict_json_still_loads():
    """A verdict.json from before these fields existed: missing keys take their defaults, unknown ones are dropped."""
    old = {
        "script": "/w/train.py",
        "argv": [],
        "failing_stage": "inductor",
        "repro_attempts": [{"kind": "graph", "result": "the graph alone fails differently"}],
        "a_key_from_elsewhere": 1,
    }
    v = Verdict.from_dict(old)
    assert v.repro.attempts == (ReproAttempt("graph", "the graph alone fails differently"),)
    assert v.repro.attempts[0]["kind"] == "graph"  # as the renderers read it
    assert (v.deferred, v.repro.test_repro, v.repro.nodes_before) == ((), None, None)
    assert isolation_of(v).failing_stage == "inductor"


def test_on_start_is_called_for_trials_that_run_not_for_journal_answers(tmp_path):
    from reprokit.trial.runner import Runner

    script = tmp_path / "ok.py"
    script.write_text("print('fine')\n")
    spec = TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), label="ok")
    started, finished = [], []
    run_dir = RunDir.create(str(tmp_path), "progress")
    runner = Runner(
        run_dir,
        timeout=120,
        on_start=started.append,
        on_trial=lambda s, o, cached: finished.append((s.label, o.kind, cached)),
    )
    try:
        runner(spec)
        runner(spec)  # the same question again: answered from the journal
    finally:
        runner.close()
    assert [s.label for s in started] == ["ok"]
    assert finished == [("ok", "pass", False), ("ok", "pass", True)]
