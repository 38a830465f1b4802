"""Hangs end to end on the real compiler (issue 47), each opt-in for CI's time (REPROKIT_ALL_SLOW_TESTS=1):
a pass of the job's own that loops, captured and bisected offline to torch's counter that names it; two ranks
under torchrun, rank 0 hanging in a compile while rank 1 waits in an all-reduce; and a bisect in place, whose
first hang sets the compile limit of every later trial."""

import glob
import json
import pathlib
import signal
import sys

import pytest

from tests.opt_in import opt_in
from tests.test_capture import cli
from tests.test_capture_hang import capture_until, compiling

CASES = pathlib.Path(__file__).parent / "capture_cases"

pytestmark = [
    pytest.mark.slow,
    opt_in(
        "2 to 8 min each on 2 loaded cores): test_capture_hang.py's "
        "test_a_compile_hang_ended_by_sigterm_is_captured_and_bisected_to_a_repro_by_time covers a "
        "captured hang bisected offline to a verified repro.py"
    ),
]


def test_a_pass_that_loops_is_named_by_torchs_post_grad_counter(workdir, tmp_path):
    capture = tmp_path / "cap"
    assert capture_until(workdir, capture, "pass_hang_job.py", compiling(1), signal.SIGTERM, after=5) == 143
    code, out, err = cli(
        "bisect", "--from-capture", str(capture), "-o", str(tmp_path / "runs"), "--no-pack", "--no-configs"
    )  # the config flips: each a trial spinning to the limit, asserted on by no line here
    assert code == 0, out + err
    assert "failing stage              inductor" in out
    # torch counts a custom post-grad pass among its post-grad passes: the application is the job's own pass
    assert "subsystem                  post_grad_passes #" in out and ": post_grad_custom_post_pass" in out
    assert "repro.py verified: failed the same way in 1 of 1 fresh runs" in err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    said = (run_dir / "repro_run" / "stderr.txt").read_text()  # `python repro.py`, as verified
    assert "the hang reproduced; every thread's stack:" in said and " in spin\n" in said  # the job's pass, looping


def ranks_ready(capture, _proc) -> bool:
    """Rank 0 compiles graph 1 (it never ends) and rank 1, done compiling, has gone on to its all-reduce."""

    def marker(rank):
        found = glob.glob(str(capture / f"rank{rank}" / "ahead-*" / "inflight"))
        return open(found[0], "rb").read().rstrip(b"\0").decode() if found else None

    return marker(0) == "compile 1" and marker(1) == ""


def test_two_ranks_rank_0_hangs_compiling_and_rank_1_waits_in_a_collective(workdir, tmp_path):
    capture = tmp_path / "cap"
    launch = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "hang_ranks_job.py"]
    capture_until(workdir, capture, launch, ranks_ready, signal.SIGTERM, after=3)
    ranks = json.loads((capture / "capture.json").read_text())["ranks"]
    assert (ranks["0"]["ended_in"], ranks["0"]["failed"]) == ("compiling graph 1", True)
    assert (ranks["1"]["ended_in"], ranks["1"]["failed"]) == ("waiting in a collective (all_reduce)", False)
    failure = json.loads((capture / "rank0" / "failure.json").read_text())
    assert (failure["kind"], failure["graph"], failure["process_group"]["world_size"]) == ("hang", 1, 2)
    assert not (capture / "rank1" / "failure.json").exists()
    code, out, err = cli("bisect", "--from-capture", str(capture), "-o", str(tmp_path / "runs"), "--no-minify",
                         "--no-pack", "--no-subsystems", "--no-configs")  # fmt: skip
    assert code == 0, out + err
    assert "from a capture (rank 0, graph 1): no run of the job; rank 1 was waiting in a collective (all_reduce)" in out


def test_in_place_the_first_hang_sets_the_compile_limit_of_later_trials(workdir, tmp_path):
    code, out, err = cli("bisect", str(workdir / "hang_job.py"), "-o", str(tmp_path / "runs"), "--no-minify", "--no-pack",
                         "--no-configs", "--timeout", "200")  # fmt: skip
    assert code == 0, out + err
    assert "a hang: each compile may take " in err and "(3x the job's longest compile" in err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    entries = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    original = next(e["outcome"] for e in entries if e["spec"]["label"] == "original")
    assert (original["kind"], original["seconds"] >= 200) == ("hang", True)  # the whole --timeout
    later = [e for e in entries if e["spec"].get("compile_limit") and e["outcome"]["kind"] == "hang"]
    assert later and all(e["outcome"]["seconds"] < original["seconds"] - 20 for e in later)  # each ends at its limit
    assert all("still compiling after" in e["outcome"]["note"] for e in later)
