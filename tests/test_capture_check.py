"""reprokit capture --check-accuracy (issue 46, item 2): a job with no check of its own, each graph's first calls
compared with eager in the job; the first graph that diverges is written out as the failure. The real compiler on
CPU, and the capture's accuracy edge cases, each one line and its exit code."""

import json
import os
import pathlib
import sys

import pytest
from test_capture import cli, reprokit, script_trials

from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "capture_cases"
ANNOUNCED = (
    "reprokit capture: --check-accuracy: each graph's first 2 calls also run eagerly and in float64 on copies of "
    "their inputs (those calls take about 5x as long)"
)


def reprokit_lines(err: str) -> list:
    """reprokit's own lines of stderr (the job's, and torch's warnings, left out)."""
    return [line for line in err.splitlines() if line.startswith("reprokit")]


def test_check_accuracy_writes_the_first_diverging_graph_with_its_inputs(workdir, tmp_path):
    capture = tmp_path / "cap"
    code, out, err = reprokit(
        "capture", "-o", str(capture), "--check-accuracy", "--", sys.executable, "drift_job.py", cwd=workdir
    )
    assert code == 0, err  # the job's own exit status: it has no check, and it went on
    assert out.startswith("loss ")  # the job's own output
    failure = json.loads((capture / "rank0" / "failure.json").read_text())
    assert (failure["kind"], failure["graph"], failure["phase"]) == ("accuracy", 0, "run")
    check = failure["check"]
    assert (check["call"], check["tolerance"]) == (1, 1e-3)
    [diverged] = check["diverged"]
    assert diverged["name"] == "output 0" and diverged["compiled_vs_fp64"] > 0.1 > diverged["eager_vs_fp64"]
    assert reprokit_lines(err) == [
        ANNOUNCED,
        f"reprokit capture: graph 0 (rank 0) diverged from eager: {check['mismatch']}",
        f"reprokit capture: the failing graph is in {capture}/rank0; next: reprokit bisect --from-capture {capture}",
    ]
    assert {"graph.py", "inputs.pt"} <= {p.name for p in (capture / "rank0" / "case").iterdir()}  # real inputs
    summary = json.loads((capture / "capture.json").read_text())["ranks"]["0"]
    assert (summary["checked_calls"], summary["diverged"]) == (1, 0)  # the checks end with the first divergence


def test_a_compiled_graph_more_accurate_than_eager_is_not_flagged(workdir, tmp_path):
    """float16 (x + 2048) - 2048: eager rounds in between, inductor computes in float32. Nothing diverged, the
    capture says which graph was the more accurate, and there is nothing to bisect."""
    capture = tmp_path / "cap"
    code, out, err = reprokit(
        "capture", "-o", str(capture), "--check-accuracy", "--", sys.executable, "more_accurate_job.py", cwd=workdir
    )
    assert (code, out) == (0, "done (4096,)\n"), err
    assert reprokit_lines(err) == [
        ANNOUNCED,
        "reprokit capture: no graph diverged from eager in 1 checked call; compiled is more accurate than eager "
        "(float64 reference) in graph 0: not flagged",
    ]
    assert sorted(p.name for p in capture.iterdir()) == ["capture.json"]
    code, _, err = cli("bisect", "--from-capture", str(capture))
    assert code == 3
    assert err == (
        "reprokit: the captured job did not fail, and no graph diverged from eager in 1 checked call (1 graph "
        "compiled): nothing to bisect\n"
    )


def test_a_job_that_fails_without_compile_too_is_nothing_to_isolate(workdir, tmp_path):
    """cholesky of a matrix that is not positive-definite raises compiled and eagerly alike: the captured graph's
    eager stage fails the same way (raised from torch's function, not its aten op), so no compiler is to blame."""
    capture = tmp_path / "cap"
    code, _, err = reprokit("capture", "-o", str(capture), "--", sys.executable, "eager_fails_job.py", cwd=workdir)
    assert code == 1 and "_LinAlgError" in err, err[-2000:]
    flags = ("--no-minify", "--no-pack", "--no-configs", "--no-subsystems")
    code, _, err = reprokit("bisect", "--from-capture", str(capture), "-o", str(tmp_path / "art"), *flags)
    assert code == 3, err[-2000:]
    [run_dir] = (tmp_path / "art").glob("*-capture")
    assert err.splitlines()[-1] == (
        "reprokit: the captured graph fails the same way run eagerly (rank 0, graph 0): the job fails without "
        f"compile too; that is not a compiler bug (run folder: {run_dir})"
    )


@pytest.mark.parametrize(
    "args, line",
    [
        (("--check-calls", "3"), "--check-calls needs --check-accuracy: it says how many calls of each graph to check"),
        (("--check-accuracy", "--check-calls", "0"), "--check-calls takes a number of calls, 1 or more (got 0)"),
    ],
)
def test_check_calls_bad_input(tmp_path, args, line):
    code, out, err = cli("capture", "-o", str(tmp_path / "cap"), *args, "--", sys.executable, "-c", "pass")
    assert (code, out, err) == (2, "", f"reprokit: {line}\n")


@pytest.mark.slow
@opt_in(
    "4 min on a loaded 2-core machine): a capture bisected to a verified lowering repro is covered "
    "by test_capture.py's test_capture_then_bisect_from_capture, the divergence's capture by "
    "test_check_accuracy_writes_the_first_diverging_graph_with_its_inputs"
)
def test_check_accuracy_finds_the_diverging_graph_in_one_run_and_bisects_it(workdir, tmp_path):
    capture = tmp_path / "cap"
    code, _, err = reprokit(
        "capture", "-o", str(capture), "--check-accuracy", "--", sys.executable, "drift_job.py", cwd=workdir
    )
    assert code == 0 and (capture / "rank0" / "failure.json").exists(), err
    code, out, err = reprokit(
        "bisect", "--from-capture", str(capture), "-o", str(tmp_path / "art"), "--json", cwd=tmp_path
    )
    assert code == 0, err[-3000:]
    v = json.loads(out)
    assert (v["kind"], v["graph"], v["failing_stage"]) == ("accuracy", 0, "inductor")
    assert v["last_passing_stage"] == "aot_eager_decomp_partition"
    assert v["subsystem"]["name"] == "lowerings" and "aten.relu" in v["subsystem"]["detail"]
    assert v["repro_verified"] is True and os.path.exists(v["repro"])
    assert script_trials(v["run_dir"], "drift_job.py") == []  # one run of the job: the capture's
