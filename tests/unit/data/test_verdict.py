"""The frozen Verdict and verdict.json's flat form: one mapping both ways, an older file still reads, and each value
a later phase supersedes read once, final."""

from __future__ import annotations

import dataclasses

import pytest

from reprokit.data.phases import Evidence, Isolation, Repro
from reprokit.data.records import ReproAttempt
from reprokit.data.verdict import FLAT_KEYS, RunInfo, Verdict

ISOLATION = Isolation(
    script="/w/train.py",
    argv=("--lr", "3e-4"),
    failing_stage="inductor",
    kind="exception",
    signature={"kind": "exception", "exc_type": "RuntimeError", "message": "boom"},
    config={"cpp.simdlen": 0},
    subsystem={"name": "lowerings", "application": 3},
    decisive_trials={"first_failing": "/t/1"},
    message="the bisect's message",
    deferred=("confirm", "configs", "torch_logs", "graph_confirm"),
)
REPRO = Repro(
    kind="source",
    path="/r/repro.py",
    verified=True,
    attempts=(ReproAttempt("graph", "fails differently"), ReproAttempt("source", "verified")),
    nodes_before=64,
    nodes_after=5,
    unit="lines",
    trials=9,
    seconds=20.0,
    message="the bisect's message; minify's note",
)
EVIDENCE = Evidence(
    asked=("confirm", "configs", "torch_logs", "graph_confirm"),
    config={"cpp.x": None},
    confirmed=False,
    torch_logs="/t/logs",
    graph_confirmed=True,
    trials=3,
    seconds=4.0,
)
FULL = Verdict(ISOLATION, REPRO, EVIDENCE, RunInfo(run_dir="/r", tarball="/r/x.tar.gz", exit_code=4))


def test_the_flat_form_has_every_key_in_the_order_it_always_had():
    flat = FULL.to_dict()
    assert list(flat) == list(FLAT_KEYS) and len(FLAT_KEYS) == len(set(FLAT_KEYS)) == 68
    assert flat["repro_attempts"] == [
        {"kind": "graph", "result": "fails differently"},
        {"kind": "source", "result": "verified"},
    ]
    assert (flat["repro"], flat["minify_trials"], flat["deferred_trials"], flat["tarball"]) == (
        "/r/repro.py",
        9,
        3,
        "/r/x.tar.gz",
    )
    assert flat["nodes"] == {"original": 64, "minified": 5, "unit": "lines"} and flat["argv"] == ["--lr", "3e-4"]


def test_the_flat_form_reads_back_to_the_same_flat_form():
    flat = FULL.to_dict()
    assert Verdict.from_dict(flat).to_dict() == flat
    assert Verdict.from_dict(flat).repro == dataclasses.replace(REPRO, message=None)  # the message is the verdict's


def test_later_phases_supersede_and_the_verdict_reads_the_final_value():
    before = Verdict(ISOLATION)
    assert (before.config, before.subsystem, before.message) == (
        {"cpp.simdlen": 0},
        {"name": "lowerings", "application": 3},
        "the bisect's message",
    )
    assert before.deferred == ISOLATION.deferred and before.decisive_trials == {"first_failing": "/t/1"}
    assert FULL.config == {"cpp.x": None}
    assert FULL.subsystem == {"name": "lowerings", "application": 3, "confirmed": False}
    assert FULL.decisive_trials == {"first_failing": "/t/1", "torch_logs": "/t/logs"}
    assert FULL.message == "the bisect's message; minify's note" and FULL.deferred == ()
    assert FULL.evidence.graph_confirmed is True


def test_evidence_that_did_not_ask_leaves_the_isolations_values():
    v = Verdict(ISOLATION, evidence=Evidence(asked=("torch_logs",), torch_logs="/t/logs", seconds=1.0))
    assert (v.config, v.subsystem) == (ISOLATION.config, ISOLATION.subsystem)
    # the questions it did not ask still wait (a run past its time plan leaves the config flips: app/pipeline.py)
    assert v.deferred == tuple(d for d in ISOLATION.deferred if d != "torch_logs") != ()


def test_before_minify_and_the_evidence_the_flat_form_has_their_defaults():
    flat = Verdict(ISOLATION).to_dict()
    assert (flat["repro"], flat["repro_verified"], flat["nodes"], flat["repro_attempts"]) == (None, None, None, [])
    assert (flat["minify_seconds"], flat["deferred_seconds"], flat["deferred_trials"]) == (0.0, None, 0)
    assert flat["message"] == "the bisect's message" and flat["deferred"] == list(ISOLATION.deferred)


def test_an_older_verdict_json_missing_keys_still_reads():
    old = {"script": "/w/train.py", "argv": [], "failing_stage": "inductor", "a_key_from_elsewhere": 1}
    v = Verdict.from_dict(old)
    assert v.isolation.failing_stage == "inductor" and v.repro == Repro() and v.run == RunInfo()
    flat = v.to_dict()
    assert (flat["decisive_trials"], flat["deferred_seconds"], flat["nodes"], flat["exit_code"]) == ({}, None, None, 0)
    assert "a_key_from_elsewhere" not in flat and Verdict.from_dict(flat).to_dict() == flat


def test_a_verdict_cannot_be_changed():
    with pytest.raises(dataclasses.FrozenInstanceError):
        FULL.run = RunInfo()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        FULL.run.tarball = None  # type: ignore[misc]
