"""--executor slurm with every phase at its defaults on examples/relu_bug.py against the real cluster (issue 45):
the evidence phase's two threads submitting job arrays at once, and an interrupted run resumed to its verdict."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.opt_in import opt_in
from tests.test_slurm import ENV, REPO, our_jobs, reprokit


def relu_bug_project(tmp_path) -> pathlib.Path:
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(REPO / "examples" / "relu_bug.py", work / "relu_bug.py")
    return work


def check_relu_bug_verdict(b: dict) -> None:
    """examples/relu_bug.py's verdict as the local executor gives it: stage inductor, lowering aten.relu (its
    boundary confirmed by the evidence phase's re-run), the planted config as the workaround, a verified repro."""
    assert (b["failing_stage"], b["kind"], b["graph"]) == ("inductor", "crash", 0), b
    assert b["subsystem"]["name"] == "lowerings" and "aten.relu" in b["subsystem"]["detail"], b["subsystem"]
    assert b["subsystem"]["confirmed"] is True, b["subsystem"]
    assert b["config"] == {"cpp.inject_relu_bug_TESTING_ONLY": None}, b["config"]
    assert b["repro_verified"] is True and b["nodes"]["minified"] <= 3, b["nodes"]
    assert "torch.relu(" in pathlib.Path(b["repro"]).read_text()
    assert b["deferred"] == [] and os.path.exists(b["tarball"]), b


@pytest.mark.slow
def test_default_bisect_through_slurm_holds_through_its_evidence_phase(tmp_path, slurm_cluster):
    """Every phase with its defaults (issue 45: the boundary's re-run, in a thread, and the config flips, in the
    main one, each submit a job array through one executor; that ended in a traceback, exit 1, no tarball)."""
    work = relu_bug_project(tmp_path)
    p = reprokit("bisect", "relu_bug.py", "--json", "-o", str(tmp_path / "shared"), "--executor", "slurm", cwd=work)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    b = json.loads(p.stdout)
    check_relu_bug_verdict(b)
    assert b["deferred_trials"] >= 2, b["deferred_trials"]
    journal = [json.loads(line) for line in (pathlib.Path(b["run_dir"]) / "journal.jsonl").read_text().splitlines()]
    assert len(journal) == b["trials"] + b["minify_trials"] + b["deferred_trials"]
    assert our_jobs(tmp_path) == []


@pytest.mark.slow
@opt_in(
    "554 s in the suite at 110e4fd, CI over its 45 minutes): --resume is covered locally by "
    "test_e2e's third_of_three case, an interrupted SLURM run's jobs cancelled by test_slurm's "
    "cancel test, a default-flags SLURM bisect by the test above"
)
def test_an_interrupted_slurm_bisect_resumes_to_the_same_verdict(tmp_path, slurm_cluster):
    """Ctrl-C once the run has journaled a few trials: its jobs are cancelled; --resume answers those from the
    journal, submits the rest and ends with the verdict an uninterrupted run gives, no job left in the queue."""
    work = relu_bug_project(tmp_path)
    shared = tmp_path / "shared"
    proc = subprocess.Popen(
        [sys.executable, "-m", "reprokit", "bisect", "relu_bug.py", "-o", str(shared), "--executor", "slurm"],
        cwd=work,
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        journaled = wait_for_journal(shared, 3, proc)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
        assert proc.returncode != 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    wait_until_gone(tmp_path)
    before = len(journaled.read_text().splitlines())
    p = reprokit("bisect", "--resume", str(journaled.parent), "--json", cwd=work)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    b = json.loads(p.stdout)
    check_relu_bug_verdict(b)
    # the interrupted run's answers were not asked again: the journal grew only by the trials the resume ran
    after = len(journaled.read_text().splitlines())
    assert before >= 3 and after - before == b["trials"] + b["minify_trials"] + b["deferred_trials"], (before, b)
    assert our_jobs(tmp_path) == []


def wait_for_journal(shared: pathlib.Path, lines: int, proc, seconds: float = 600) -> pathlib.Path:
    """The run folder's journal once it holds `lines` trials (the bisect still running)."""
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        for journal in shared.glob("*/journal.jsonl"):
            if len(journal.read_text().splitlines()) >= lines:
                return journal
        time.sleep(0.5)
    raise AssertionError(f"no {lines} trials journaled (bisect exit {proc.poll()})")


def wait_until_gone(under) -> None:
    for _ in range(20):  # scancel is asynchronous: a cancelled job may show for a moment as CANCELLING
        if not our_jobs(under):
            return
        time.sleep(0.5)
    assert our_jobs(under) == []


def test_two_threads_submit_their_rounds_at_once(tmp_path, slurm_cluster):
    """Two threads map a round each at the same moment through one Runner (the evidence phase does): both job
    arrays are submitted and every trial answers; before, the second batch raised "Nesting with executor.batch()"."""
    import threading

    from reprokit.data.executor import ExecutorSettings
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.executors import remote_executor
    from reprokit.trial.runner import Runner

    script = tmp_path / "passes.py"
    script.write_text("print('ok')\n")
    run_dir = RunDir.create(str(tmp_path / "shared"), "threads")
    runner = Runner(run_dir, timeout=600.0, jobs=4, remote=remote_executor(ExecutorSettings("slurm"), run_dir.path))
    start = threading.Barrier(2)
    answers: dict = {}

    def round_of(thread: int) -> None:
        specs = [
            TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), attempt=2 * thread + i)
            for i in range(2)
        ]
        start.wait()
        try:
            answers[thread] = [o.kind for o in runner.map(specs)]
        except Exception as e:  # the thread's failure, for the assertion below to show
            answers[thread] = repr(e)

    threads = [threading.Thread(target=round_of, args=(t,)) for t in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
    finally:
        runner.close()
    assert answers == {0: ["pass", "pass"], 1: ["pass", "pass"]}
    journal = [json.loads(line) for line in (pathlib.Path(run_dir.path) / "journal.jsonl").read_text().splitlines()]
    # each thread's trials keep their round, one of their own (reprokit plan packs them so)
    rounds = [{e["round"] for e in journal if e["spec"]["attempt"] // 2 == t} for t in (0, 1)]
    assert len(rounds[0]) == len(rounds[1]) == 1 and rounds[0] != rounds[1], journal
    assert our_jobs(tmp_path) == []
