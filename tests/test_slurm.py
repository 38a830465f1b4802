"""--executor slurm against a real SLURM cluster on this machine (scripts/slurm-up; no mocked scheduler): the bad
input it refuses before any trial, a CPU case bisected through it, a trial of several ranks over two nodes, a
cancelled run, a job killed at its time limit; and `reprokit plan` on a journal."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.opt_in import opt_in

REPO = pathlib.Path(__file__).resolve().parent.parent
CASES = REPO / "tests" / "cases"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def reprokit(*args, cwd, env=ENV, timeout=1500):
    return subprocess.run(
        [sys.executable, "-m", "reprokit", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout
    )


def project(tmp_path, *names):
    work = tmp_path / "project"
    work.mkdir()
    for name in names:
        shutil.copy(CASES / name, work / name)
    return work


def our_jobs(under) -> list:
    """ "ID STATE" of the trial jobs the scheduler still has queued or running whose output goes under `under` (this
    test's own: the tests run side by side, and another test's job is not this one's leftover)."""
    out = subprocess.run(
        ["squeue", "-h", "-n", "reprokit-trial", "-O", "JobID:40,State:20,STDOUT:1000"], capture_output=True, text=True
    ).stdout
    rows = [line.split(None, 2) for line in out.splitlines() if line.strip()]
    return [f"{r[0]} {r[1]}" for r in rows if len(r) == 3 and r[2].strip().startswith(str(under))]


def jobcomp() -> str:
    return pathlib.Path("/var/log/slurm/jobcomp.log").read_text(errors="replace")


def test_no_sbatch_on_path_is_one_line_exit_2(tmp_path):
    work = project(tmp_path, "passes.py")
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    p = reprokit(
        "bisect",
        "passes.py",
        "--executor",
        "slurm",
        "-o",
        str(tmp_path / "out"),
        cwd=work,
        env={**ENV, "PATH": str(bare)},
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr == "reprokit: --executor slurm: no sbatch on PATH (run reprokit where SLURM's commands are)\n"
    assert not (tmp_path / "out").exists()


def test_unknown_partition_is_one_line_exit_2(tmp_path, slurm_cluster):
    work = project(tmp_path, "passes.py")
    p = reprokit(
        "bisect",
        "passes.py",
        "--executor",
        "slurm",
        "--slurm-partition",
        "nosuch",
        "-o",
        str(tmp_path / "out"),
        cwd=work,
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr == ("reprokit: --slurm-partition: no partition named nosuch (sinfo -h -p nosuch lists nothing)\n")


def test_output_folder_the_nodes_cannot_see_is_one_line_exit_2(tmp_path, slurm_cluster):
    """reprokit in a mount namespace of its own, its output folder a tmpfs there: slurmd (outside) sees the empty
    folder beneath, so the first tiny job cannot write where reprokit reads."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare to hide a folder from the node")
    work = project(tmp_path, "passes.py")
    out = tmp_path / "private"
    out.mkdir()
    inner = (
        f"mount -t tmpfs none {out} && exec {sys.executable} -m reprokit bisect passes.py --executor slurm "
        f"--slurm-time 2 -o {out}"
    )
    p = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
        cwd=work,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 2, p.stderr
    assert re.fullmatch(
        rf"reprokit: --output-dir {out}: the cluster's nodes cannot see it \(a first job, \d+, "
        r"ended [A-Z_]+ without writing there\); name a shared folder\n",
        p.stderr,
    ), p.stderr


def test_plan_packs_each_round_onto_k_nodes(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"command": "reprokit bisect x.py", "options": {}}))
    trials = [(1, 10.0), (1, 10.0), (1, 20.0), (2, 5.0), (3, 30.0), (3, 30.0)]
    (run / "journal.jsonl").write_text(
        "".join(
            json.dumps({"key": str(i), "round": r, "outcome": {"seconds": s}}) + "\n" for i, (r, s) in enumerate(trials)
        )
    )
    p = reprokit("plan", str(run), "--nodes", "1,2,4", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    # round 1: 40 s on one node, 20 on two (20 | 10+10); round 2: 5; round 3: 60, then 30 on two or more
    assert [x["seconds"] for x in data["plans"]] == [105.0, 55.0, 55.0]
    assert data["node_hours"] == round(105 / 3600, 4) and data["rounds"] == 3 and data["trials"] == 6
    table = reprokit("plan", str(run), "--nodes", "1,2", cwd=tmp_path).stdout
    assert table == (
        "6 trials in 3 rounds, 1 node(s) a trial\n nodes        wall\n     1     0:01:45\n"
        "     2     0:00:55\nnode-hours spent: 0.029\n"
    )


@pytest.mark.slow
@opt_in(
    "145 s in CI at 8e43f58): a SLURM bisect to a verified repro runs in CI through "
    "test_slurm_phases.py's default-flags bisect, with every phase on"
)
def test_relu_bisect_through_slurm_matches_local(tmp_path, slurm_cluster):
    """The same verdict and repro as the local executor (test_e2e.py's planted relu, bisected with these flags,
    names graph 0 at inductor and cuts it to relu and its add); every trial a job in the scheduler's records."""
    work = project(tmp_path, "relu_compile_error.py", "_blocks.py")
    began = time.time()
    slurm = reprokit(
        "bisect",
        "relu_compile_error.py",
        "--no-configs",
        "--no-subsystems",
        "--no-pack",
        "--json",
        "-o",
        str(tmp_path / "shared"),
        "--executor",
        "slurm",
        "--slurm-max-jobs",
        "2",
        cwd=work,
    )
    assert slurm.returncode == 0, slurm.stderr
    b = json.loads(slurm.stdout)
    assert (b["failing_stage"], b["kind"], b["graph"]) == ("inductor", "exception", 0), b
    assert (b["signature"]["exc_type"], b["signature"]["message"]) == (
        "InductorError",
        "CppCompileError: C++ compile error",
    )
    assert b["repro_verified"] is True and b["nodes"]["minified"] <= 4 < 50 <= b["nodes"]["original"], b["nodes"]
    text = pathlib.Path(b["repro"]).read_text()
    assert "        relu = torch.relu(h);  h = None\n        return (relu,)\n" in text, text
    assert "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'" in text, text
    run = pathlib.Path(b["run_dir"])
    info = json.loads((run / "run.json").read_text())
    assert info["executor"]["name"] == "slurm"
    executed = [json.loads(line) for line in (run / "journal.jsonl").read_text().splitlines()]
    ids = sorted(p.name for p in (run / "slurm").iterdir() if re.fullmatch(r"\d+(_\d+)?", p.name))
    assert len(ids) >= len(executed) >= 4
    log = jobcomp()
    recorded = [
        f"ArrayJobId={i.split('_')[0]} ArrayTaskId={i.split('_')[1]} " if "_" in i else f"JobId={i} " for i in ids
    ]
    assert all(r in log for r in recorded), [r for r in recorded if r not in log]
    assert any("_" in i for i in ids), "no round went as a job array"
    assert all(e["round"] for e in executed) and our_jobs(tmp_path) == [], (began, our_jobs(tmp_path))


@pytest.mark.slow
@opt_in(
    "a SLURM cluster run): an interrupted SLURM run's jobs are cancelled, tested in CI by test_signals.py's SIGTERM through "
    "SLURM (test_slurm_phases.py's interrupted-then-resumed bisect is opt-in too)"
)
def test_interrupted_slurm_run_leaves_no_job_behind(tmp_path, slurm_cluster):
    work = project(tmp_path, "relu_compile_error.py", "_blocks.py")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "reprokit",
            "bisect",
            "relu_compile_error.py",
            "--no-configs",
            "--no-subsystems",
            "--no-pack",
            "--executor",
            "slurm",
            "-o",
            str(tmp_path / "shared"),
        ],
        cwd=work,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as at a terminal: a suite started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.time() + 120
        while not our_jobs(tmp_path) and time.time() < deadline:
            time.sleep(0.2)
        assert our_jobs(tmp_path), "no trial job was ever queued"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
        assert proc.returncode != 0
    finally:  # a failed test leaves no bisect running beside the suite (CI at 214dd42: one ran on after it)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    for _ in range(20):  # scancel is asynchronous: a cancelled job may show for a moment as CANCELLING
        if not our_jobs(tmp_path):
            break
        time.sleep(0.5)
    assert our_jobs(tmp_path) == []


def test_cancel_finds_a_job_whose_submission_was_cut_short_and_refuses_new_ones(tmp_path, slurm_cluster):
    """Ctrl-C between sbatch's answer and submitit reading the id leaves a job reprokit never recorded (CI at
    8288a62: job 183 still RUNNING after the interrupted run). cancel_all asks the scheduler for the run's own
    comment and cancels that job too; after it, no trial is submitted."""
    from reprokit.data.executor import ExecutorSettings
    from reprokit.data.records import TrialSpec
    from reprokit.trial.slurm import SlurmExecutor, TrialsCancelled, on_node

    executor = SlurmExecutor(ExecutorSettings("slurm", time=5), str(tmp_path / "jobs"))
    # Submitted the way the executor submits, but never recorded: as if Ctrl-C had cut _submit short.
    lost = executor.executor.submit(on_node, ["sleep", "600"], str(tmp_path), dict(os.environ), str(tmp_path), 600, 1)
    assert any(line.startswith(f"{lost.job_id} ") for line in our_jobs(tmp_path))
    assert executor.cancel_all() == [lost.job_id]
    for _ in range(20):
        if not our_jobs(tmp_path):
            break
        time.sleep(0.5)
    assert our_jobs(tmp_path) == []
    script = tmp_path / "passes.py"
    script.write_text("print('ok')\n")
    with pytest.raises(TrialsCancelled):
        executor.run(
            TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path)),
            str(tmp_path / "trial"),
            str(tmp_path / "cache"),
            60.0,
        )
    assert our_jobs(tmp_path) == []


@pytest.mark.slow
def test_a_job_killed_at_its_time_limit_is_retried_once_then_reported_not_the_bug(tmp_path, slurm_cluster):
    from reprokit.data.executor import ExecutorSettings
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.executors import remote_executor
    from reprokit.trial.runner import Runner

    script = tmp_path / "forever.py"
    script.write_text("import time\nwhile True:\n    time.sleep(1)\n")
    run_dir = RunDir.create(str(tmp_path / "shared"), "forever")
    runner = Runner(run_dir, timeout=600.0, remote=remote_executor(ExecutorSettings("slurm", time=1), run_dir.path))
    try:
        outcome = runner(TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path)))
    finally:
        runner.close()
    assert outcome.kind == "skip" and not outcome.failed, outcome
    said = re.fullmatch(
        r"the scheduler ended the trial's job: job (\d+) TIMEOUT, then job (\d+) TIMEOUT; not the "
        r"failure",
        outcome.note,
    )
    assert said, outcome.note
    assert run_dir.journal() == []  # no answer, none journaled: a --resume asks the cluster again
    # The scheduler's own records say so too.
    for job in said.groups():
        assert re.search(rf"JobId={job} .*JobState=TIMEOUT", jobcomp()), job
    assert our_jobs(tmp_path) == []


def test_executor_config_file_json_or_toml(tmp_path, slurm_cluster):
    """The settings from one file, checked like the options: an unknown key, then a TOML [slurm] table's partition."""
    work = project(tmp_path, "passes.py")
    (tmp_path / "bad.json").write_text('{"partition": "debug", "bogus": 1}')
    p = reprokit("bisect", "passes.py", "--executor-config", str(tmp_path / "bad.json"), cwd=work)
    assert (p.returncode, p.stderr) == (2, "reprokit: unknown executor setting(s): bogus\n")
    (tmp_path / "c.toml").write_text('[slurm]\npartition = "nosuch"\ntime = 5\n')
    p = reprokit(
        "bisect", "passes.py", "--executor-config", str(tmp_path / "c.toml"), "-o", str(tmp_path / "o"), cwd=work
    )
    assert (p.returncode, p.stderr) == (
        2,
        "reprokit: --slurm-partition: no partition named nosuch (sinfo -h -p nosuch lists nothing)\n",
    )


def test_a_torchrun_trial_is_joined_across_the_jobs_nodes():
    """Each node of a job of several nodes starts torchrun as node SLURM_NODEID of the job's nodes, meeting on the
    first node's address at a port of its own; a one-node job or a one-process trial is left as it is."""
    from reprokit.trial.slurm import across_nodes

    command = [
        "python",
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        "-m",
        "reprokit.child.main",
    ]
    env = {"SLURM_JOB_NUM_NODES": "2", "SLURM_NODEID": "1", "SLURM_JOB_ID": "4242", "SLURM_JOB_NODELIST": "gpu[07-08]"}
    joined = across_nodes(command, env, {"gpu[07-08]": "10.0.0.7"}.get)
    assert joined == [
        "python",
        "-m",
        "torch.distributed.run",
        "--nnodes=2",
        "--node-rank=1",
        "--master-addr=10.0.0.7",
        "--master-port=24242",
        "--nproc-per-node=2",
        "-m",
        "reprokit.child.main",
    ]
    # an array task's port is its own: array job 4242, task 3
    task = across_nodes(command, {**env, "SLURM_ARRAY_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": "3"}, lambda n: "h")
    assert "--master-port=24245" in task
    assert across_nodes(command, {**env, "SLURM_JOB_NUM_NODES": "1"}, lambda n: "h") == command
    assert across_nodes(["python", "-m", "reprokit.child.main"], env, lambda n: "h") == [
        "python",
        "-m",
        "reprokit.child.main",
    ]


def test_a_trial_of_several_ranks_spans_the_nodes_it_asks_for(tmp_path, slurm_cluster):
    """--slurm-nodes-per-trial 2: a two-rank torchrun trial is one job of two nodes, four ranks in all, each rank
    answering in the trial folder; the scheduler's records show the job on both nodes."""
    from reprokit.data.executor import ExecutorSettings
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.executors import remote_executor
    from reprokit.trial.runner import Runner

    shutil.copy(REPO / "tests" / "capture_cases" / "tp_allreduce_job.py", tmp_path / "job.py")
    run_dir = RunDir.create(str(tmp_path / "shared"), "two-nodes")
    settings = ExecutorSettings("slurm", partition="twonodes", time=10, nodes_per_trial=2)
    runner = Runner(run_dir, timeout=600.0, remote=remote_executor(settings, run_dir.path))
    try:
        outcome = runner(
            TrialSpec(
                mode="script",
                stage="none",
                script=str(tmp_path / "job.py"),
                cwd=str(tmp_path),
                ranks=2,
                label="no-compile",
            )
        )
    finally:
        runner.close()
    assert outcome.kind == "pass", outcome  # no compile: the planted relu never runs, the all-reduce across 4 ranks
    trial = pathlib.Path(outcome.trial_dir)
    assert sorted(p.name for p in trial.iterdir() if re.fullmatch(r"rank\d+", p.name)) == ["rank1", "rank2", "rank3"]
    assert all((trial / r / "result.json").exists() for r in ("rank1", "rank2", "rank3"))
    jobs = [p.name for p in (pathlib.Path(run_dir.path) / "slurm").iterdir() if p.name.isdigit()]
    assert any(re.search(rf"JobId={j} .*NodeList=\S+ NodeCnt=2 ", jobcomp()) for j in jobs), jobs
    assert our_jobs(tmp_path) == []
