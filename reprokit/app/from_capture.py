"""`reprokit bisect --from-capture DIR`: a run folder whose every trial is a graph trial on the failing graph a
capture wrote; the same Isolation, Repro and Evidence as a script bisect, so minify, pack and issue work on it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time

from reprokit.app import guards
from reprokit.app.common import default_jobs, local_start, noop, record_secrets, recorded_environment
from reprokit.app.pipeline import Steps, run_phases
from reprokit.app.request import BisectRequest
from reprokit.app.runners import open_runner
from reprokit.bisect.capture_folder import CapturedFailure, read_capture
from reprokit.bisect.diverging import KeptCalls, diverging_graph, kept_calls
from reprokit.bisect.from_capture import GraphBisector
from reprokit.bisect.hang_limit import hang_limit
from reprokit.bisect.session import BisectOptions
from reprokit.capture.files import SUMMARY
from reprokit.data.budget import Budget
from reprokit.data.events import Emit, Event
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir, write_json_atomic
from reprokit.data.verdict import Verdict
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.trial.devices import cuda_devices
from reprokit.trial.executors import check_executor
from reprokit.trial.runner import Runner


def bisect_from_capture(capture_dir: str, request: BisectRequest | None = None, emit: Emit = noop) -> Verdict:
    """Ladder, subsystems and lowerings, minify and pack, all on the captured graph: zero runs of the job. A job
    that ended in error with no exception from torch: first, which of its graphs diverges (bisect/diverging). Every
    option bisect takes applies, or is refused with one line when it cannot (_check_options)."""
    started, r = time.monotonic(), request or BisectRequest()
    root = _capture_folder(capture_dir)
    _check_options(r)
    output_dir = r.output_dir or os.path.join(os.getcwd(), "artifacts")
    check_executor(r.executor, output_dir)  # no sbatch, no such partition, a folder the nodes cannot see: exit 2
    kept = _kept_calls(root)
    captured = _read_capture(root) if kept is None else None
    script = kept.script if kept is not None else captured.script if captured is not None else ""
    name = os.path.splitext(os.path.basename(script))[0]
    run_dir = RunDir.create(output_dir, f"{name}-capture")
    record_secrets(run_dir)
    emit(Event.RUN_DIR, path=run_dir.path, phase="capture")  # no script runs first: its phase is named for what it does
    jobs = r.jobs or default_jobs()
    limit = r.timeout or (_hang_limit(captured, emit) if captured is not None else None) or 600.0
    with open_runner(run_dir, emit, timeout=limit, jobs=jobs, settings=r.executor) as runner:
        captured = captured or _diverging(kept, runner, run_dir, emit)
        case = _copy_capture(captured, run_dir)
        opts = BisectOptions(
            script=captured.script,
            cwd=os.path.dirname(captured.script),
            timeout=r.timeout,
            jobs=jobs,
            configs=r.configs,
            subsystems=r.subsystems,
            check_accuracy=kept is not None,
        )
        facts = RunFacts.of(_write_run_json(run_dir, opts, captured, case, r))
        bisector = GraphBisector(opts, runner, emit, captured, case)
        steps = Steps(r.minify, r.pack, r.command, capture=True)
        budget = Budget.of(r.budget, started)
        return run_phases(run_dir, facts, bisector, runner, steps, emit, budget, local_start(started, r.executor))


def _diverging(kept: KeptCalls | None, runner: Runner | None, run_dir: RunDir, emit: Emit) -> CapturedFailure:
    """The graph that diverges alone among the kept calls; NothingToIsolate naming the run folder otherwise."""
    assert kept is not None and runner is not None  # no failure captured: the job's calls were kept
    try:
        return diverging_graph(kept, runner, emit)
    except NothingToIsolate as e:
        raise NothingToIsolate(f"{e} (run folder: {run_dir.path})") from None


def _write_run_json(
    run_dir: RunDir, opts: BisectOptions, captured: CapturedFailure, case: str, r: BisectRequest
) -> dict:
    """run.json: the options the graph trials run with, the steps after the verdict, the executor and the capture;
    the record written."""
    record = {
        "command": r.command,
        "options": dataclasses.asdict(opts),
        "python": sys.executable,
        "environment": recorded_environment(),
        "steps": {"minify": r.minify, "pack": r.pack, "budget": r.budget},
        "executor": r.executor.to_dict() if r.executor else None,
        "capture": {
            "from": captured.root,
            "rank": captured.rank,
            "case": case,
            "phase": captured.failure.get("phase"),
            "kind": captured.failure.get("kind"),
        },
    }
    run_dir.write_json("run.json", record)
    return record


def _kept_calls(root: str) -> KeptCalls | None:
    """The calls a job that ended in error with no exception from torch left (none: a failure capture)."""
    from reprokit import compat

    return kept_calls(root, compat.TORCH_VERSION)


def _read_capture(root: str) -> CapturedFailure:
    """The capture in root, refused (exit 2) when it was made on CUDA and this machine has no GPU."""
    from reprokit import compat  # torch, imported by the command that needs it (capture's CLI start stays light)

    captured = read_capture(root, compat.TORCH_VERSION)
    if captured.on_cuda and not cuda_devices():
        raise ReprokitError(
            "the capture was made on CUDA and this machine has no GPU: run reprokit bisect "
            "--from-capture on a machine with one"
        )
    return captured


def _hang_limit(captured: CapturedFailure, emit: Emit) -> float | None:
    """A captured hang's trials are judged by time: the limit the capture sets (said), None for another kind."""
    if captured.failure.get("kind") != "hang":
        return None
    limit, why = hang_limit(captured.failure)
    emit(Event.NOTE, text=f"a hang: each trial may take {limit:.0f} s ({why}; --timeout sets another)")
    return limit


def _capture_folder(capture_dir: str) -> str:
    """The capture folder's absolute path; a file (its capture.json or failure.json, say) or a missing path is
    one line saying what to pass."""
    root = os.path.abspath(capture_dir)
    if os.path.isfile(root):
        above = os.path.dirname(root)
        holder = next((d for d in (above, os.path.dirname(above)) if os.path.isfile(os.path.join(d, SUMMARY))), None)
        raise ReprokitError(
            f"{capture_dir} is a file, not a capture folder; pass the folder reprokit capture wrote"
            + (f": reprokit bisect --from-capture {holder}" if holder else " (its --output-dir)")
        )
    if not os.path.isdir(root):
        raise ReprokitError(
            f"no such capture folder: {capture_dir}; capture the job first: reprokit capture "
            f"--output-dir {capture_dir} -- CMD"
        )
    return root


# Options of a script's bisect that a capture cannot take: the option, then why (said after "--from-capture ").
REFUSED = {
    "repeat": "replays the captured failure; drop --repeat (it measures how often a run of the script fails)",
    "check_accuracy": "bisects the failure the capture recorded; drop --check-accuracy and capture the job with "
    "reprokit capture --check-accuracy",
    "max_input_bytes": "replays the inputs the capture kept; drop --max-input-bytes",
    "kind": "bisects the failure a capture recorded; drop --kind (a slowdown is bisected from its script)",
    "slow_threshold": "bisects the failure a capture recorded; drop --slow-threshold",
    "versions": "runs no script; drop --versions and run reprokit versions RUN_DIR on the finished run folder",
}


def _check_options(r: BisectRequest) -> None:
    """The options a capture's bisect takes as a script's does; one line (exit 2) for those that cannot apply."""
    guards.trial_options(r.jobs, r.timeout)
    if r.ranks != 1:  # the capture holds the failing rank's graph: its trials need no launcher and no other rank
        raise ReprokitError(
            "--from-capture replays the failing rank's graph in one process: drop --nproc-per-node "
            f"{r.ranks} (torchrun's job was captured already)"
        )
    refused = next((name for name in r.changed() if name in REFUSED), None)
    if refused is not None:
        raise ReprokitError(f"--from-capture {REFUSED[refused]}")


def _copy_capture(captured: CapturedFailure, run_dir: RunDir) -> str:
    """The failing rank's case and failure.json, copied into the run folder (the run stands without the capture
    folder, and its pack holds them); the copied case folder."""
    dest = run_dir.file("capture")
    shutil.copytree(captured.case, os.path.join(dest, "case"))  # a crash's graph, written ahead, as a failure's
    write_json_atomic(os.path.join(dest, "failure.json"), captured.failure)  # a crash's: read from what it left
    for extra in ("capture.json",):
        if os.path.exists(os.path.join(captured.root, extra)):
            shutil.copy(os.path.join(captured.root, extra), os.path.join(dest, extra))
    return os.path.join(dest, "case")
