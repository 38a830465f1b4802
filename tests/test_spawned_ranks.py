"""Ranks a job spawns itself (torch.multiprocessing.spawn: neither RANK nor LOCAL_RANK is set): the capture names
each process's rank from its process group, so each rank writes its own folder; an FSDP2 job of blocks, each
compiled then sharded (gloo, CPU), is bisected in place and from a capture per rank to the failing block's graph."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist

from reprokit.capture import files
from reprokit.capture.recorder import Recorder
from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "dist_cases"
REPO = pathlib.Path(__file__).parent.parent


def reprokit(cwd, *args):
    """`python -m reprokit ARGS` in a fresh process: (exit code, stdout, stderr)."""
    p = subprocess.run(
        [sys.executable, "-m", "reprokit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    return p.returncode, p.stdout, p.stderr


def script_runs(run_dir: str, script: str) -> list:
    """Labels of the journal's trials that ran the job's own script."""
    with open(os.path.join(run_dir, "journal.jsonl")) as f:
        entries = [json.loads(line) for line in f]
    return sorted(
        e["label"]
        for e in entries
        if e["spec"]["mode"] == "script" and os.path.basename(e["spec"].get("script") or "") == script
    )


def check_block_verdict(v: dict) -> None:
    """The second block's graph, inductor's relu lowering, a repro.py verified alone."""
    assert (v["failing_stage"], v["graph"]) == ("inductor", 1), v
    assert v["subsystem"]["name"] == "lowerings" and "aten.relu" in v["subsystem"]["detail"], v["subsystem"]
    assert v["repro_verified"] is True and v["repro_kind"] == "graph", v["repro_attempts"]
    assert v["signature"]["message"].startswith("CppCompileError"), v["signature"]


def test_the_recorder_names_its_rank_from_the_process_group_once_there_is_one(tmp_path, monkeypatch):
    """A spawned rank has no RANK: before the group exists it writes as rank 0; once it is initialised, as its
    rank in the group, and what it wrote ahead of a crash follows it there."""
    from torch.testing._internal.distributed.fake_pg import FakeStore

    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    rec = Recorder(str(tmp_path), 1 << 20)
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    rec.before_compile(0, gm, [torch.randn(4)], {}, {"backend": "inductor"})
    assert rec.rank == "0" and sorted(os.listdir(tmp_path)) == ["rank0"]
    dist.init_process_group("fake", store=FakeStore(), rank=3, world_size=4)
    try:
        rec.before_compile(1, gm, [torch.randn(4)], {}, {"backend": "inductor"})
        assert rec.rank == "3"
    finally:
        dist.destroy_process_group()
    assert rec.rank == "3"  # the group is gone, the rank is not: capture.json's line is written at exit
    (ahead,) = os.listdir(tmp_path / "rank3")
    assert sorted(os.listdir(tmp_path)) == ["rank3"]  # rank0/ was a guess, and is gone
    assert sorted(os.listdir(tmp_path / "rank3" / ahead / files.GRAPHS)) == ["g0", "g1"]
    facts = json.loads((tmp_path / "rank3" / ahead / files.PROCESS).read_text())
    assert (facts["rank"], facts["process_group"]["world_size"]) == ("3", 4)
    rec.write_summary()
    assert sorted(os.listdir(tmp_path)) == []  # a process that exits takes what it wrote ahead with it


@pytest.fixture
def project(tmp_path):
    work = tmp_path / "project"
    shutil.copytree(CASES, work, ignore=shutil.ignore_patterns("__pycache__"))
    return work


@pytest.mark.slow
@opt_in(
    "176 s in the suite at 110e4fd, CI over its 45 minutes): a job that spawns its ranks is covered "
    "by the in-place case below, a capture per rank by test_capture.py's multi-rank cases"
)
def test_an_fsdp2_job_that_spawns_its_ranks_is_captured_per_rank_and_bisected_from_the_capture(project, tmp_path):
    capture = tmp_path / "cap"
    code, out, err = reprokit(
        project, "capture", "--output-dir", str(capture), "--", sys.executable, "fsdp2_blocks_relu.py"
    )
    assert code == 1 and "CppCompileError" in err, err[-3000:]
    assert sorted(p.name for p in capture.iterdir()) == ["capture.json", "rank0", "rank1"]
    for rank in (0, 1):
        failure = json.loads((capture / f"rank{rank}" / "failure.json").read_text())
        assert (failure["rank"], failure["graph"], failure["phase"]) == (str(rank), 1, "compile"), failure
        assert failure["process_group"] == {"rank": rank, "world_size": 2, "backend": "gloo"}
    assert sorted(json.loads((capture / "capture.json").read_text())["ranks"]) == ["0", "1"]

    code, out, err = reprokit(
        tmp_path,
        "bisect",
        "--from-capture",
        str(capture),
        "-o",
        str(tmp_path / "art"),
        "--json",
        "--no-pack",
        "--no-configs",
    )
    assert code == 0, err[-3000:]
    v = json.loads(out)
    check_block_verdict(v)
    assert script_runs(v["run_dir"], "fsdp2_blocks_relu.py") == []  # zero runs of the job


@pytest.mark.slow
def test_an_fsdp2_job_that_spawns_its_ranks_is_bisected_in_place_to_the_failing_blocks_graph(project):
    code, out, err = reprokit(
        project, "bisect", "fsdp2_blocks_relu.py", "--json", "--no-configs", "--no-pack", "-o", str(project / "art")
    )
    assert code == 0, err[-3000:]
    v = json.loads(out)
    check_block_verdict(v)
    # The graph the original run saved fails alone: every later question, and minify, is a graph trial on it.
    assert script_runs(v["run_dir"], "fsdp2_blocks_relu.py") == ["baseline-no-compile", "original"]
    run = subprocess.run([sys.executable, v["repro"]], capture_output=True, text=True, timeout=600)
    assert run.returncode != 0 and "CppCompileError" in run.stderr, run.stderr[-2000:]
