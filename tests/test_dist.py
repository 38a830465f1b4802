"""Jobs of several ranks: merging what the ranks of one trial wrote, the launcher hint, the start-up hook,
and the identity of an asynchronous CUDA fault."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from reprokit.data import signature as sig
from reprokit.data.ranks import merge_ranks, needs_launcher
from reprokit.trial.outcome import classify

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write_rank(trial, rank, record):
    os.makedirs(trial / f"rank{rank}", exist_ok=True)
    (trial / f"rank{rank}" / "result.json").write_text(json.dumps(record))


def test_the_lowest_failing_rank_answers_for_a_spawned_job(tmp_path):
    """mp.spawn: the trial process itself saw only torch's ProcessRaisedException; the ranks saw the bug."""
    boom = sig.Signature("exception", "CppCompileError", "C++ compile error", None).to_dict()
    parent = {
        "kind": "exception",
        "signature": sig.Signature("exception", "ProcessRaisedException").to_dict(),
        "compiled": False,
        "graphs": 0,
    }
    write_rank(tmp_path, 0, {"kind": "pass", "signature": sig.PASS.to_dict(), "compiled": True, "graphs": 1})
    write_rank(
        tmp_path,
        1,
        {
            "kind": "exception",
            "signature": boom,
            "compiled": True,
            "graphs": 1,
            "traceback": "rank 1's",
            "counters": {"inductor/lowerings": 3},
        },
    )
    (tmp_path / "result.json").write_text(json.dumps(parent))
    out = classify(str(tmp_path), 1, False, 1.0)
    assert (out.kind, out.signature.exc_type, out.failed_ranks) == ("exception", "CppCompileError", [1])
    assert out.compiled and out.graphs == 1 and out.traceback == "rank 1's"
    assert out.counters == {"inductor/lowerings": 3}
    assert out.note.startswith("rank 1 failed")


def test_torchrun_rank_zero_is_the_trial_folder_and_passing_ranks_keep_the_trials_answer(tmp_path):
    root = {"kind": "pass", "signature": sig.PASS.to_dict(), "compiled": True, "graphs": 2}
    write_rank(tmp_path, 1, {"kind": "pass", "signature": sig.PASS.to_dict(), "compiled": True, "graphs": 2})
    merged = merge_ranks(str(tmp_path), root, torchrun=True)
    assert merged["kind"] == "pass" and merged["failed_ranks"] == [] and merged["graphs"] == 2
    accuracy = {"kind": "accuracy", "signature": {"kind": "accuracy"}, "compiled": True}
    write_rank(tmp_path, 1, accuracy)
    assert merge_ranks(str(tmp_path), {**root, "kind": "accuracy"}, torchrun=True)["failed_ranks"] == [0, 1]


# The end of torchrun's own output (rank 1's entry cut to its two lines) when both ranks of tests/dist_cases/crash_two_ranks.py died by SIGSEGV (torch
# 2.13, gloo), as a trial's stderr.txt held it.
TORCHRUN_REPORT = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
crash_two_ranks.py FAILED
------------------------------------------------------------
Failures:
[1]:
  rank      : 1 (local_rank: 1)
  exitcode  : -11 (pid: 8589)
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-27_05:19:36
  host      : ci
  rank      : 0 (local_rank: 0)
  exitcode  : -11 (pid: 8588)
  error_file: <N/A>
  traceback : Signal 11 (SIGSEGV) received by PID 8588
============================================================
"""


def test_a_torchrun_rank_killed_by_a_signal_is_that_crash_not_the_launchers_exit_1(tmp_path):
    """A rank that segfaults writes no result (its state.json says only how far it got), and torchrun exits 1:
    its report names the first rank that died and the signal."""
    (tmp_path / "state.json").write_text(json.dumps({"compiled": True, "graphs": 1}))
    (tmp_path / "stderr.txt").write_text("Fatal Python error: Segmentation fault\n" + TORCHRUN_REPORT)
    out = classify(str(tmp_path), 1, False, 10.2, torchrun=True)
    assert (out.kind, out.signature.exc_type, out.signature.message) == ("crash", "SIGSEGV", "killed by SIGSEGV")
    assert out.failed_ranks == [0, 1] and out.note == "rank 0 was killed by SIGSEGV" and out.compiled
    (tmp_path / "stderr.txt").write_text(TORCHRUN_REPORT.replace("-11 (pid: 8588)", "1 (pid: 8588)"))
    assert (
        classify(str(tmp_path), 1, False, 1.0, torchrun=True).signature.message
        == "trial process exited 1 without a result"
    )  # rank 0 exited 1 by itself: no signal to name


def test_a_rank_that_only_lost_its_peer_does_not_stand_for_the_trial(tmp_path):
    """Rank 1 raised; rank 0's all-reduce then died of gloo's "Connection closed by peer" (the words a real run of
    tests/dist_cases/warm_cache_across_ranks.py gave): rank 1's failure is the trial's."""
    lost = sig.Signature(
        "exception",
        "RuntimeError",
        "[<path>:N] Connection closed by peer [N.N.N.N]:N. This is typically caused by a remote worker crashing.",
    ).to_dict()
    raised = sig.Signature("exception", "AttributeError", "'_OpNamespace' 'demo' object has no attribute 'keep'")
    root = {"kind": "exception", "signature": lost, "compiled": True, "graphs": 1}
    write_rank(tmp_path, 1, {"kind": "exception", "signature": raised.to_dict(), "compiled": True, "graphs": 1})
    merged = merge_ranks(str(tmp_path), root, torchrun=True)
    assert merged["signature"] == raised.to_dict() and merged["failed_ranks"] == [0, 1]
    assert merged["note"].startswith("rank 1 failed (ranks 0, 1 failed)")


FAULTHANDLER = (
    'Current thread 0x00007f00 (most recent call first):\n  File "{}", line 7 in {}\n  File "job.py", line 3 in step\n'
)


def test_a_hung_job_carries_every_ranks_stacks_and_the_issue_shows_where_each_waited(tmp_path):
    """mp.spawn's parent waits in join; its ranks wait in different collectives (a desync): all of it is said."""
    from reprokit.report.decisive import decisive_error

    c10d = "/site/torch/distributed/distributed_c10d.py"
    (tmp_path / "stacks.txt").write_text(FAULTHANDLER.format("/site/torch/multiprocessing/spawn.py", "join"))
    for rank, waits_in in ((0, "all_reduce"), (1, "barrier")):
        os.makedirs(tmp_path / f"rank{rank}")
        (tmp_path / f"rank{rank}" / "stacks.txt").write_text(FAULTHANDLER.format(c10d, waits_in))
    out = classify(str(tmp_path), -9, True, 60.0)
    assert (out.kind, out.signature.frame) == ("hang", f'File "{c10d}", line 7 in all_reduce')  # rank 0's wait
    assert [ln for ln in out.traceback.splitlines() if ln.startswith("==")] == [
        "== trial process ==",
        "== rank0 ==",
        "== rank1 ==",
    ]
    said = decisive_error("hang", "", stacks=out.traceback).splitlines()
    assert said[0] == "Timed out; where each process waited:"
    assert f'  File "{c10d}", line 7 in barrier' == said[said.index("== rank1 ==") + 2]


def test_env_init_without_a_launcher_is_recognised():
    code = (
        "import torch.distributed as d\ntry:\n    d.init_process_group('gloo')\nexcept Exception as e:\n    print(e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout
    assert needs_launcher(said), said
    assert not needs_launcher("RuntimeError: shape mismatch")


# What a device-side assert says without and with CUDA_LAUNCH_BLOCKING (recorded on an H100, torch 2.11).
ASYNC = (
    "torch.AcceleratorError: CUDA error: device-side assert triggered\nCUDA kernel errors might be "
    "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
)
BLOCKING = (
    '  File "/tmp/torchinductor_u/ab/cabc.py", line 88, in call\n    triton_poi_fused_index_relu_3.run('
    "buf0, arg0_1, 4096, stream=stream0)\ntorch.AcceleratorError: CUDA error: device-side assert triggered\n"
)


def test_an_async_cuda_fault_is_its_fault_and_kernel_not_the_host_frame():
    at_sync = sig.for_cuda_fault("AcceleratorError", ASYNC + 'File "train.py", line 40, in <module>')
    in_graph = sig.for_cuda_fault("AcceleratorError", ASYNC + 'File "graph.py", line 3, in forward')
    assert at_sync == in_graph and at_sync.frame is None
    assert at_sync.message == "device-side assert triggered"
    pinned = sig.for_cuda_fault("AcceleratorError", BLOCKING)
    assert pinned.frame == "kernel triton_poi_fused_index_relu"
    assert pinned.matches(at_sync) and at_sync.matches(pinned)
    other_kernel = sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "gather_7"))
    assert not pinned.matches(other_kernel)
    assert not at_sync.matches(sig.for_cuda_fault("AcceleratorError", "an illegal memory access was encountered"))


def test_a_kernel_is_identity_only_when_launches_were_synchronous_and_compares_by_its_fused_ops():
    """Without CUDA_LAUNCH_BLOCKING the kernel a traceback names is where the host noticed: no identity. With it,
    a lowering falling back or a graph cut smaller fuses other ops around the one that raises: the same fault."""
    noticed_later = sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "gather_7"), False)
    assert noticed_later.frame is None
    whole = sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "mul_relu_sigmoid_0"))
    alone = sig.for_cuda_fault("RuntimeError", BLOCKING.replace("index_relu_3", "relu_1"))
    assert whole.frame == "kernel triton_poi_fused_mul_relu_sigmoid" and alone.frame == "kernel triton_poi_fused_relu"
    assert whole.matches(alone) and alone.matches(whole)
    # A graph cut down to the relu fuses it with its backward's mask: still the relu's fault (seen on an H100).
    cut = sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "relu_threshold_backward_0"))
    assert cut.matches(whole)
    norm = sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "native_layer_norm_backward_4"))
    assert not norm.matches(whole) and not norm.matches(cut)
    assert not sig.for_cuda_fault("AcceleratorError", BLOCKING.replace("index_relu_3", "mul_2")).matches(alone)


@pytest.mark.slow
def test_the_runner_switches_set_after_a_fault_reach_every_later_trial_but_keep_earlier_answers(tmp_path):
    """After a CUDA fault every later trial runs with CUDA_LAUNCH_BLOCKING=1; what was answered stays answered."""
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.data.signature import LAUNCH_BLOCKING_ENV
    from reprokit.trial.runner import Runner

    script = tmp_path / "env.py"
    script.write_text("import os\nassert os.environ.get('CUDA_LAUNCH_BLOCKING') != '1', 'synchronous'\n")
    runner = Runner(RunDir.create(str(tmp_path / "runs"), "env"), timeout=120)
    spec = TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path))
    assert runner(spec).kind == "pass"
    runner = runner.with_policy(env=LAUNCH_BLOCKING_ENV)
    assert runner(spec).kind == "pass" and runner.executed == 1
    later = runner(TrialSpec(mode="script", stage="none", script=str(script), cwd=str(tmp_path), attempt=1))
    assert (later.kind, later.signature.message) == ("exception", "synchronous")


WEDGED_EXIT = """import threading, time
import torch.multiprocessing as mp


def step(rank):
    if rank == 0:
        # Its exit waits forever, as a rank's does on a process group whose peer is still in a collective.
        threading.Thread(target=threading.Event().wait).start()
        raise RuntimeError("rank 0 failed")
    time.sleep(600)  # the peer waits for rank 0 (in a barrier, in destroy_process_group)


if __name__ == "__main__":
    mp.spawn(step, nprocs=2)
"""


@pytest.mark.slow
def test_a_failed_spawned_rank_whose_exit_waits_forever_still_ends_the_trial(tmp_path):
    """mp.spawn stops the other ranks only once a failed one has exited: a failed rank's teardown is bounded."""
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.runner import Runner

    (tmp_path / "wedged.py").write_text(WEDGED_EXIT)
    runner = Runner(RunDir.create(str(tmp_path / "runs"), "wedged"), timeout=300)
    out = runner(TrialSpec(mode="script", stage="none", script=str(tmp_path / "wedged.py"), cwd=str(tmp_path)))
    assert (out.kind, out.signature.message, out.failed_ranks) == ("exception", "rank N failed", [0]), out
    assert out.seconds < 150, out.seconds  # not the trial's timeout
    teardown = (pathlib.Path(out.trial_dir) / "rank0" / "teardown_stacks.txt").read_text()
    assert "in wait" in teardown  # where it waited, dumped when its time was up


@pytest.mark.slow
def test_a_python_script_the_trial_starts_with_subprocess_runs_under_the_stage(tmp_path):
    """The worker plants a compile error in inductor; under the eager stage it passes only if the router reached
    it through the start-up hook (else it compiles with inductor, fails, and check=True fails the trial)."""
    from reprokit.data.records import TrialSpec
    from reprokit.data.rundir import RunDir
    from reprokit.trial.runner import Runner

    (tmp_path / "worker.py").write_text(
        "import torch\ntorch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "
        "'compile_error'\nprint(torch.compile(torch.relu)(torch.randn(4)))\n"
    )
    (tmp_path / "launch.py").write_text(
        "import subprocess, sys\nsubprocess.run([sys.executable, 'worker.py'], check=True)\n"
    )
    runner = Runner(RunDir.create(str(tmp_path / "runs"), "sub"), timeout=300)
    out = runner(TrialSpec(mode="script", stage="eager", script=str(tmp_path / "launch.py"), cwd=str(tmp_path)))
    assert (out.kind, out.compiled, out.failed_ranks) == ("pass", True, []), (out, out.traceback[-2000:])
    rank = json.loads((pathlib.Path(out.trial_dir) / "rank0" / "result.json").read_text())
    assert rank["kind"] == "pass" and rank["graphs"] == 1


def test_the_start_up_hook_hands_over_to_the_sitecustomize_it_shadows(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import builtins\nbuiltins.THEIRS = 'ran'\n")
    hook = os.path.join(REPO, "reprokit", "child", "starthook")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([hook, str(theirs), REPO])}
    out = subprocess.run([sys.executable, "-c", "print(THEIRS)"], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "ran", out.stderr


def test_issue_md_says_the_trials_after_a_cuda_fault_ran_with_synchronous_launches():
    from reprokit.data.verdict import Verdict
    from reprokit.report.issue_notes import isolated_lines

    fault = {
        "fault": "device-side assert triggered",
        "kernel": "triton_poi_fused_mul_relu_sigmoid_1",
        "launch_blocking": True,
    }
    assert isolated_lines(
        Verdict.from_dict(dict(script="s.py", argv=[], cuda_fault=fault, repro_kind="graph")), []
    ) == [
        "CUDA fault: device-side assert triggered in kernel `triton_poi_fused_mul_relu_sigmoid_1`; every trial after "
        "the original ran with `CUDA_LAUNCH_BLOCKING=1`, so the fault surfaced at the kernel that raised it (repro.py "
        "sets it too)"
    ]
