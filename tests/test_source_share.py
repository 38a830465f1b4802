"""The source reduction's share of time (issue #32): when it runs out, the passes stop asking, the smallest script
so far that fails the same way is verified as repro.py, and the run says it is not minimal. In-process, on the
real compiler, with the share made zero (the default is max(240 s, 40 runs of the script), at most what the run's
time plan has left: minify/plan.py)."""

import ast
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

from reprokit.app.bisect import bisect_script
from reprokit.app.request import BisectRequest
from reprokit.minify import plan
from reprokit.source import reduce
from reprokit.source.polish import polished

CASES = pathlib.Path(__file__).parent / "cases"


def bisect_with_no_share(tmp_path, monkeypatch, share_of, files: tuple):
    """(verdict, notes): a bisect in-process of files[0] (its helpers beside it), with the share `share_of` names,
    (module, function), made zero (when given)."""
    work = tmp_path / "project"
    work.mkdir()
    for name in files:
        shutil.copy(CASES / name, work / name)
    monkeypatch.chdir(work)
    if share_of:
        monkeypatch.setattr(*share_of, lambda seconds: 0.0)
    notes = []
    v = bisect_script(
        str(work / files[0]),
        request=BisectRequest(output_dir=str(tmp_path / "artifacts"), pack=False, configs=False, subsystems=False),
        emit=lambda event, **d: notes.append(d["text"]) if event == "note" else None,
    )
    return v, notes


def test_the_default_share_is_four_minutes_or_forty_runs_of_the_script():
    assert reduce.reduction_share(0.5) == 240.0 and reduce.reduction_share(30.0) == 1200.0


@pytest.mark.slow
def test_a_spent_share_ends_with_the_script_verified_and_says_it_is_not_minimal(tmp_path, monkeypatch):
    # The share is spent by the run's time plan, as a slow bisect spends it: the plan's end an hour before the run
    # began, and no floor (the default plan's numbers are tested in tests/unit/minify/test_plan.py).
    monkeypatch.setattr(plan, "TARGET", -3600.0)
    monkeypatch.setattr(plan, "FLOOR", 0.0)
    v, notes = bisect_with_no_share(tmp_path, monkeypatch, None, ("graph_break_fullgraph.py",))
    said = (
        "the source reduction stopped at its share of time (0 s): repro.py is the smallest script so far that "
        "fails the same way, not a minimal one"
    )
    assert said in notes and said in v.message, (notes, v.message)
    # Nothing was cut, and what was written still fails the same way in a fresh interpreter, and passes without
    # compile: a verified repro, though not a minimal one.
    assert v.repro.kind == "source" and v.repro.verified is True, v.message
    original = (CASES / "graph_break_fullgraph.py").read_text()
    # Comments dropped, no cut; laid out by the formatter (source/polish.py)
    assert pathlib.Path(v.repro.path).read_text() == polished(ast.unparse(ast.parse(original)) + "\n")
    candidates = [p for p in pathlib.Path(v.run.run_dir).glob("candidates/*.py")]
    assert len(candidates) == 1  # the script itself, asked once; no candidate after the share ran out
    p = subprocess.run(
        [sys.executable, v.repro.path],
        capture_output=True,
        text=True,
        timeout=300,
        env={k: x for k, x in os.environ.items() if k != "PYTHONPATH"},
    )
    assert p.returncode != 0 and "Unsupported" in p.stderr, p.stderr[-2000:]


def test_the_default_graph_share_is_four_minutes_or_thirty_first_trials():
    from reprokit.minify import graph

    assert graph.graph_share(2.0) == 240.0 and graph.graph_share(20.0) == 600.0


@pytest.mark.slow
def test_a_spent_graph_share_ends_with_the_smallest_graph_so_far_verified_and_says_so(tmp_path, monkeypatch):
    from reprokit.minify import graph

    v, notes = bisect_with_no_share(
        tmp_path, monkeypatch, (graph, "graph_share"), ("relu_compile_error.py", "_blocks.py")
    )
    said = [
        n
        for n in notes
        if n.startswith(
            "the graph minify stopped at its share of time (0 s): repro.py is the "
            "smallest graph so far that fails the same way ("
        )
    ]
    assert len(said) == 1 and said[0] in v.message and said[0].endswith("nodes), not a minimal one"), notes
    assert v.repro.kind == "graph" and v.repro.verified is True, v.message
    # One batch of cuts ran (it set the share); none after it.
    journal = [json.loads(line) for line in (pathlib.Path(v.run.run_dir) / "journal.jsonl").read_text().splitlines()]
    cuts = [row for row in journal if row["label"].startswith("minify-")]
    assert 1 <= len(cuts) <= os.cpu_count(), [row["label"] for row in journal]
    assert v.repro.nodes_after <= v.repro.nodes_before


@pytest.mark.slow
def test_a_budget_spent_before_the_first_source_trial_checks_the_script_itself_and_says_so(tmp_path, monkeypatch):
    """--budget running out as the source reduction starts: its first trial is not run, which is not "the script no
    longer fails the same way" (CI at 1dbe7f9 said that); the script itself is checked as repro.py and the run
    says it is not reduced."""
    real = reduce.source_problem

    def budget_spent_now(run_dir, v, runner, *args, **kwargs):
        runner = runner.with_policy(deadline=time.monotonic())  # what --budget sets: no search trial starts after it
        return real(run_dir, v, runner, *args, **kwargs)

    monkeypatch.setattr(reduce, "source_problem", budget_spent_now)
    v, notes = bisect_with_no_share(tmp_path, monkeypatch, (reduce, "reduction_share"), ("graph_break_fullgraph.py",))
    said = "the run's budget was spent before the source reduction's first trial: repro.py is the script itself, not reduced"
    assert said in notes and said in v.message, (notes, v.message)
    assert v.repro.kind == "source" and v.repro.verified is True, v.message
    original = (CASES / "graph_break_fullgraph.py").read_text()
    assert pathlib.Path(v.repro.path).read_text() == ast.unparse(ast.parse(original)) + "\n"
    journal = [json.loads(line) for line in (pathlib.Path(v.run.run_dir) / "journal.jsonl").read_text().splitlines()]
    assert not [row for row in journal if row["label"].startswith("source-")], [row["label"] for row in journal]
    assert v.repro.nodes_after == reduce.code_lines(pathlib.Path(v.repro.path).read_text())
