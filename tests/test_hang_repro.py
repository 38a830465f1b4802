"""A captured hang's repro.py (issue 47): it compiles the minimal graph under a watchdog, and past the limit says
"still compiling after N s" with every thread's stack and exits 1; verification takes that report as the hang.
The cheap tests read a repro's output as reprokit reads it; the end-to-end ones (opt-in) capture a hang ended by
--compile-timeout and by Ctrl-C, bisect it offline and verify its repro on the real compiler."""

import pathlib
import signal
import subprocess
import sys
import types

import pytest

from reprokit.data.signature import HANG
from reprokit.minify import testcase
from reprokit.minify.alone import alone_signature, reported_hang
from reprokit.minify.testcase import judge_test
from reprokit.report.render import render_repro
from tests.opt_in import opt_in
from tests.test_capture_hang import bisected_to_a_repro, capture_until, capture_with_limit, compiling, hang_failure
from tests.test_repro_template import parts

CASES = pathlib.Path(__file__).parent / "capture_cases"

SAID = "still compiling after 21 s: the hang reproduced; every thread's stack:"
OUTPUT = f"W1128 compile_fx.py:1288] Sleeping for 10000\n{SAID}\nThread 0x7f (most recent call first):\n"


def test_a_repro_that_reports_its_hang_fails_the_same_way_as_the_hang():
    assert reported_hang(1, OUTPUT)
    assert alone_signature(1, OUTPUT, "") == HANG
    assert judge_test(HANG, 1, OUTPUT) == (True, SAID)  # test_repro.py, run alone, says the same


def test_a_repro_killed_at_the_limit_or_failing_otherwise_did_not_report_a_hang():
    assert not reported_hang(None, OUTPUT)  # cut by reprokit's own limit: the watchdog never spoke
    assert not reported_hang(1, "Traceback (most recent call last):\nValueError: x\n")
    assert not reported_hang(0, OUTPUT)


def hang_repro(limit: str) -> str:
    """repro.py of a one-op graph whose compile hangs (inductor's own sleep hook), as minify renders it."""
    return render_repro(
        parts(config_lines=["torch._inductor.config.sleep_sec_TESTING_ONLY = 10000"]),
        types.SimpleNamespace(graph=1, cuda_fault=None),
        stage="inductor",
        target=HANG,
        accuracy=False,
        backward=False,
        use_saved=False,
        command="reprokit bisect --from-capture cap",
        original_nodes=12,
        hang={"limit": limit, "doing": "compiling"},
    )


def test_a_hangs_repro_says_it_is_still_compiling_with_its_stacks_and_exits_1(tmp_path):
    text = hang_repro("600")
    assert "else 600\n" in text  # the verdict's limit; an argument sets another
    (tmp_path / "repro.py").write_text(text)
    done = subprocess.run([sys.executable, "repro.py", "2"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    said = [l for l in done.stderr.splitlines() if l.startswith("still ")]
    assert (
        said
        and said[0].startswith("still compiling after ")
        and said[0].endswith(" s: the hang reproduced; every thread's stack:")
    )
    assert 'repro.py", line ' in done.stderr and "site-packages/torch/" in done.stderr  # the main thread, compiling
    assert "no failure" not in done.stdout
    assert reported_hang(done.returncode, done.stderr)


def test_the_hangs_test_repro_arms_the_same_watchdog():
    text = testcase.test_text(hang_repro("30"), types.SimpleNamespace(graph=1), "inductor", HANG, False)
    compile(text, "test_repro.py", "exec")
    assert "threading.Thread(target=_watchdog, daemon=True).start()" in text.split("class TestCompileRepro")[0]


OPT_IN = opt_in(
    "4-6 min on 2 loaded cores, 45 s of CPU): test_capture_hang.py's "
    "test_a_compile_hang_ended_by_sigterm_is_captured_and_bisected_to_a_repro_by_time covers the "
    "class (the same failure.json, bisected the same way; only the capture's ending differs, which "
    "test_capture_hang.py tests)"
)


@pytest.mark.slow
@OPT_IN
def test_a_hang_past_compile_timeout_bisects_offline_to_a_repro_that_reports_it(workdir, tmp_path):
    capture = tmp_path / "cap"
    # 60 s: the training step's own compile (graph 0) took 39 s on 2 loaded cores, and must not be the hang
    assert capture_with_limit(workdir, capture, "--compile-timeout", "60s").returncode == 124
    assert hang_failure(capture)["ended_by"] == "--compile-timeout 60"
    bisected_to_a_repro(capture, tmp_path)


@pytest.mark.slow
@OPT_IN
def test_ctrl_c_in_a_compile_bisects_offline_to_a_repro_that_reports_it(workdir, tmp_path):
    capture = tmp_path / "cap"
    assert capture_until(workdir, capture, "hang_job.py", compiling(1), signal.SIGINT) == 128 + signal.SIGINT
    assert hang_failure(capture)["ended_by"] == "SIGINT"
    bisected_to_a_repro(capture, tmp_path)
