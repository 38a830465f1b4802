"""The ladder's newer answers, end to end on CPU with the real compiler: a wrong fake kernel caught by the crossref
stage, Dynamo hanging or crashing before any graph reaches a backend, memory only compiled code needs, and the
piece a user backend handed inductor.

The scripts are in tests/cases/ (first line: # EXPECT = {...}); each bisect is `reprokit bisect --json`.
"""

import pathlib
import time
from importlib import metadata

import pytest
from test_e2e import CASES, bisect, check_repro, check_verdict, expect  # noqa: F401 (CASES: the workdir fixture copies it)

from reprokit.cli_summary import summary_table
from reprokit.data.verdict import Verdict
from reprokit.versions import releases


def table_lines(data: dict) -> list:
    """The summary table the CLI prints for this verdict, as lines."""
    return summary_table(Verdict.from_dict(data)).splitlines()


def compiled_failure_of_wrong_fake_kernel() -> str:
    """How the compiled run of wrong_fake_kernel.py fails on the installed torch: up to 2.13 inductor returns the
    fake kernel's dtype and the script's own check fails; torch 2.14.1 (2.14.0 not tried) checks the custom op's
    real output against its fake dtype in the compiled code and raises there, before the script's check."""
    if releases.key(metadata.version("torch")) >= releases.key("2.14.1"):
        return "RuntimeError: expected dtype torch.float64 but got torch.float32"
    return "AssertionError: compiled returns torch.float64"


@pytest.mark.slow
def test_wrong_fake_kernel_is_named_at_the_crossref_stage(workdir):
    """The compiled run fails (the script's own dtype check; from torch 2.14.1, torch's); aot_eager_decomp_partition
    passes; the crossref stage names the op whose fake kernel disagrees with its real one, and that is the verdict."""
    exp = expect("wrong_fake_kernel.py")
    p, data = bisect(workdir, "wrong_fake_kernel.py", "--no-pack", "--no-minify")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert data["last_passing_stage"] == "aot_eager_decomp_partition"
    rows = {r["stage"]: r["kind"] for r in data["ladder"]}
    assert rows == {
        "eager": "pass",
        "aot_eager": "pass",
        "aot_eager_decomp_partition": "pass",
        "aot_eager_decomp_partition_crossref": "exception",
        "inductor": "exception",
    }
    meta = data["meta_kernel"]
    assert meta["op"] == exp["op"] and "torch.float32 and torch.float64" in meta["mismatch"]
    assert meta["compiled_failure"].startswith(compiled_failure_of_wrong_fake_kernel())
    assert "fake (meta) kernel of rk.scale.default disagrees with its real kernel" in data["message"]
    # The check's own failure is the one chased now, not "another failure seen".
    assert data["other_failures"] == [] and data["graph"] == 0
    lines = table_lines(data)
    assert "crossref (fake kernels)     FAIL (fake kernel)  " in "\n".join(lines)
    assert f"{'fake kernel':<26} rk.scale.default: Dtypes torch.float32 and torch.float64 are not equal!" in lines


@pytest.mark.slow
@pytest.mark.timing
def test_dynamo_hang_before_any_graph_is_the_eager_stage(workdir):
    """Dynamo's tracing never ends: staged as eager after two timeouts side by side, not "never calls
    torch.compile", and no later stage is started (each would hang a timeout more)."""
    exp = expect("dynamo_hang.py")
    started = time.monotonic()
    p, data = bisect(workdir, "dynamo_hang.py", "--timeout", str(exp["timeout"]), "--no-pack", "--no-minify")
    seconds = time.monotonic() - started
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert [r["stage"] for r in data["ladder"]] == ["eager"] and data["graph_count"] == 0
    assert "torch.compile hung before any graph reached a backend" in data["message"]
    # baseline, original, Dynamo's stage; the original's logs serve as the failing stage's
    assert data["trials"] == 3 and seconds < 60, (data["trials"], seconds)
    stacks = pathlib.Path(data["decisive_trials"]["first_failing"], "stacks.txt").read_text()
    assert "dynamo_hang.py" in stacks and "torch/_dynamo/" in stacks


@pytest.mark.slow
def test_dynamo_crash_before_any_graph_is_the_eager_stage_and_reduced(workdir):
    """A segfault while Dynamo traces: staged as eager, then reduced at source level like any Dynamo failure."""
    exp = expect("dynamo_crash.py")
    p, data = bisect(workdir, "dynamo_crash.py", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert "torch.compile crashed before any graph reached a backend" in data["message"]
    assert data["nodes"]["unit"] == "lines"
    check_repro(data, {"max_nodes": 20})
    assert "os.kill(os.getpid(), signal.SIGSEGV)" in pathlib.Path(data["repro"]).read_text()


@pytest.mark.slow
def test_out_of_memory_only_compiled_is_a_finding_with_both_peaks(workdir):
    exp = expect("compiled_out_of_memory.py")
    p, data = bisect(workdir, "compiled_out_of_memory.py", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    memory = data["memory"]
    # Both runs hold the 512 MiB input; the compiled one ran out before its extra buffer existed.
    assert memory["eager_peak_mib"] > 512 and memory["compiled_peak_mib"] > 512
    assert memory["measure"] == "peak resident set (ru_maxrss)"
    assert data["message"].startswith(
        "compiled needs more memory than eager: the compiled run runs out of memory (RuntimeError; peak "
    )
    assert [r["kind"] for r in data["ladder"]] == ["pass", "skip", "skip", "skip"]
    assert data["repro"] is None and data["config"] is None and data["subsystem"] is None
    assert "not minified: an out-of-memory is reported with its stage and both peaks" in p.stderr
    assert (
        f"{'memory':<26} compiled peak {memory['compiled_peak_mib']:.0f} MiB, eager peak "
        f"{memory['eager_peak_mib']:.0f} MiB (peak resident set (ru_maxrss))"
    ) in table_lines(data)


@pytest.mark.slow
def test_user_backend_that_compiles_pieces_with_inductor_names_the_failing_piece(workdir):
    exp = expect("split_backend.py")
    p, data = bisect(workdir, "split_backend.py", "--no-pack", "--no-minify", "--no-configs", "--no-subsystems")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    pieces = data["inductor_pieces"]
    assert pieces["count"] == exp["pieces"] and pieces["failed"]["piece"] == exp["failed_piece"]
    assert "aten.relu.default" in pieces["failed"]["ops"]
    assert "aten.relu.default" not in pieces["pieces"][0]["ops"] and pieces["pieces"][0]["failed"] is None
    assert pieces["failed"]["failed"] == "CppCompileError: C++ compile error"
    assert (
        "the backend 'two_pieces' had inductor compile 2 pieces; piece 2 (2 nodes: add, relu) failed"
        in (data["message"])
    )
    assert f"{'inductor pieces':<26} piece 2 of 2 failed: 2 nodes (add, relu)" in table_lines(data)


# Not `timing`: every trial is cut at 8 s and the bound is 60 s, with room for a neighbour's load.
def test_a_baseline_cut_at_the_limit_does_not_raise_the_limit_of_the_trials_beside_it(tmp_path):
    """The run's limit is ten times the no-compile baseline's time. A baseline that hung ran only as long as the
    limit: taking ten times that would let the original and the stages beside it hang ten times as long (a DDP
    rank deadlocked at teardown held a CI run for 30 minutes that way)."""
    from reprokit.bisect.session import BisectOptions, Session
    from reprokit.bisect.start import start_round
    from reprokit.data.rundir import RunDir
    from reprokit.trial.runner import Runner

    script = tmp_path / "sleeps.py"
    script.write_text("import time\nimport torch\nf = torch.compile(lambda x: x + 1)\ntime.sleep(300)\n")
    runner = Runner(RunDir.create(str(tmp_path), "hang"), timeout=8.0, jobs=4)
    try:
        started = time.monotonic()
        session = Session(BisectOptions(script=str(script), cwd=str(tmp_path)), runner, lambda *a, **k: None)
        baseline, originals = start_round(session)
        took = time.monotonic() - started
    finally:
        runner.close()
    assert (baseline.kind, [o.kind for o in originals]) == ("hang", ["hang"]), (baseline, originals)
    assert session.runner.timeout == 8.0  # a baseline cut at the limit sets no other
    assert took < 60, took  # every trial cut at 8 s (not 120 s, the floor the baseline's time would have set)


def test_a_stage_that_passes_where_the_ladder_says_it_should_fail_is_named():
    """A flaky script (held-out pytorch/pytorch#145445, backend="eager", fails 40% of runs) once got the verdict
    aot_eager_decomp_partition: its eager stage passed by chance, though the original failed with that very
    backend, and inductor passed after decomposition failed. Such a ladder is re-asked as a rate, never trusted."""
    from reprokit.bisect.steady import contradicting
    from reprokit.data.records import StageResult

    def ladder(*kinds):
        stages = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
        return [
            StageResult(stage=st, kind=k, summary="", seconds=0.1, same=k == "exception")
            for st, k in zip(stages, kinds)
        ]

    assert contradicting(ladder("pass", "pass", "exception", "pass"), "eager") == "eager"
    assert contradicting(ladder("pass", "exception", "pass", "exception"), "inductor") == "aot_eager_decomp_partition"
    assert contradicting(ladder("pass", "pass", "exception", "exception"), "inductor") is None
    # past the script's own backend a pass proves nothing (inductor may override a decomposition)
    assert contradicting(ladder("pass", "exception", "exception", "pass"), "aot_eager_decomp_partition") is None
    assert contradicting(ladder("pass", "pass", "pass", "exception"), "my_backend") is None


def test_the_report_says_how_a_flaky_failure_was_asked():
    from reprokit.report.summary import summary

    v = Verdict.from_dict(
        dict(
            script="/p/train.py",
            argv=[],
            kind="exception",
            signature={"kind": "exception", "exc_type": "AssertionError"},
            failing_stage="eager",
            last_passing_stage="none",
            flaky=True,
            repro_rate=0.5,
            repro_runs=4,
            flaky_tries=5,
        )
    )
    text = summary(v)
    assert "The failure is flaky: the script fails 2 of 4 runs (95% CI 15%–85%)." in text
    assert "was asked until it failed that way, up to 5 runs; one that passed all 5 counted as passing" in text


def test_a_stage_above_the_failing_one_that_passes_is_said_and_a_replays_own_failure_is_told_apart():
    """jvp of ldexp (#197086) crashes under aot_eager while inductor passes: ISSUE.md said it "fails from aot_eager
    on". And a while_loop graph (#166525) replayed alone failed another way inside torch's fake-tensor setup; the
    issue listed that beside the user's failure as if it were a second bug of theirs."""
    from reprokit.report.issue_notes import isolated_lines
    from reprokit.report.summary import summary

    ladder = [
        {"stage": "eager", "kind": "pass"},
        {"stage": "aot_eager", "kind": "crash"},
        {"stage": "aot_eager_decomp_partition", "kind": "crash"},
        {"stage": "inductor", "kind": "pass"},
    ]
    v = Verdict.from_dict(
        dict(
            script="/w/jvp.py",
            argv=[],
            kind="crash",
            failing_stage="aot_eager",
            last_passing_stage="eager",
            ladder=ladder,
            signature={"kind": "signal", "exc_type": "SIGSEGV", "message": "killed by SIGSEGV"},
        )
    )
    assert (
        summary(v, brief=True)
        .splitlines()[-1]
        .endswith(
            "It passes with `dynamo (backend=eager)` and fails with `aot_eager`, so the bug is in that stage; `inductor` "
            "passes again."
        )
    )
    v = Verdict.from_dict({**v.to_dict(), "ladder": ladder[:3] + [{"stage": "inductor", "kind": "crash"}]})
    assert summary(v, brief=True).endswith(
        "It passes with `dynamo (backend=eager)` and fails from `aot_eager` on, so the bug is in that stage."
    )
    met = {"kind": "exception", "exc_type": "AttributeError", "message": "'NoneType' object has no attribute 'x'"}
    met_by = {"signature": met, "trial": "/r/trials/graph-stage-inductor-1a", "replay": True}
    v = Verdict.from_dict(dict(script="/w/loop.py", argv=[], other_failures=[met_by]))
    assert isolated_lines(v, []) == [
        "a different failure met on the way: AttributeError: 'NoneType' object has no attribute 'x' (met when "
        "reprokit compiled the captured graph alone, outside the script: it may come from that replay, not from "
        "your program)"
    ]
