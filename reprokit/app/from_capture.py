"""`reprokit bisect --from-capture DIR`: a run folder whose every trial is a graph trial on the failing graph a
capture wrote; the same Isolation, Repro and Evidence as a script bisect, so minify, pack and issue work on it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys

from reprokit.app import guards
from reprokit.app import minify as minify_case
from reprokit.app.common import Emit, default_jobs, noop, record_secrets, recorded_environment
from reprokit.app.pack import packed
from reprokit.app.verdict_file import isolated, with_evidence
from reprokit.bisect.capture_folder import CapturedFailure, read_capture
from reprokit.bisect.diverging import KeptCalls, diverging_graph, kept_calls
from reprokit.bisect.from_capture import GraphBisector
from reprokit.bisect.hang_limit import hang_limit
from reprokit.bisect.session import BisectOptions
from reprokit.capture.files import SUMMARY
from reprokit.data.records import Verdict
from reprokit.data.rundir import RunDir, write_json_atomic
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.trial.devices import cuda_devices
from reprokit.trial.runner import Runner


def bisect_from_capture(
    capture_dir: str,
    *,
    output_dir: str | None = None,
    timeout: float | None = None,
    jobs: int | None = None,
    ranks: int = 1,
    subsystems: bool = True,
    configs: bool = True,
    minify: bool = True,
    pack: bool = True,
    command: str = "",
    emit: Emit = noop,
) -> Verdict:
    """Ladder, subsystems and lowerings, minify and pack, all on the captured graph: zero runs of the job. A job
    that ended in error with no exception from torch: first, which of its graphs diverges (bisect/diverging)."""
    root = _capture_folder(capture_dir)
    _check_options(jobs, timeout, ranks)
    kept = _kept_calls(root)
    captured = _read_capture(root) if kept is None else None
    script = kept.script if kept is not None else captured.script if captured is not None else ""
    name = os.path.splitext(os.path.basename(script))[0]
    run_dir = RunDir.create(output_dir or os.path.join(os.getcwd(), "artifacts"), f"{name}-capture")
    record_secrets(run_dir)
    emit("run_dir", path=run_dir.path, phase="capture")  # no script runs first: its phase is named for what it does
    jobs = jobs or default_jobs()
    runner = _runner(run_dir, timeout or 600.0, jobs, emit) if kept is not None else None
    captured = captured or _diverging(kept, runner, run_dir, emit)
    case = _copy_capture(captured, run_dir)
    opts = BisectOptions(
        script=captured.script,
        cwd=os.path.dirname(captured.script),
        timeout=timeout,
        jobs=jobs,
        configs=configs,
        subsystems=subsystems,
        check_accuracy=kept is not None,
    )
    _write_run_json(run_dir, opts, captured, case, command, {"minify": minify, "pack": pack})
    runner = runner or _runner(run_dir, timeout or _hang_limit(captured, emit) or 600.0, opts.jobs, emit)
    bisector = GraphBisector(opts, runner, emit, captured, case)
    isolation = bisector.isolate()
    verdict = isolated(run_dir, isolation)
    if not verdict.failing_stage:  # still packed: the capture and the failure are the report
        if pack:
            verdict = packed(run_dir, verdict, emit, announce=False)
        raise NothingToIsolate(f"{isolation.message} (run folder: {run_dir.path})")
    if minify:
        verdict = minify_case.minify_verdict(run_dir, verdict, runner=runner, emit=emit, command=command)
    if isolation.deferred:
        verdict = with_evidence(run_dir, verdict, bisector.after_repro(isolation))
    if pack:
        verdict = packed(run_dir, verdict, emit)
    return verdict


def _diverging(kept: KeptCalls | None, runner: Runner | None, run_dir: RunDir, emit: Emit) -> CapturedFailure:
    """The graph that diverges alone among the kept calls; NothingToIsolate naming the run folder otherwise."""
    assert kept is not None and runner is not None  # no failure captured: the job's calls were kept
    try:
        return diverging_graph(kept, runner, emit)
    except NothingToIsolate as e:
        raise NothingToIsolate(f"{e} (run folder: {run_dir.path})") from None


def _write_run_json(run_dir: RunDir, opts: BisectOptions, captured: CapturedFailure, case: str, command, steps):
    run_dir.write_json(
        "run.json",
        {
            "command": command,
            "options": dataclasses.asdict(opts),
            "python": sys.executable,
            "environment": recorded_environment(),
            "steps": steps,
            "capture": {
                "from": captured.root,
                "rank": captured.rank,
                "case": case,
                "phase": captured.failure.get("phase"),
                "kind": captured.failure.get("kind"),
            },
        },
    )


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


def _runner(run_dir: RunDir, limit: float, jobs: int, emit: Emit) -> Runner:
    return Runner(
        run_dir,
        timeout=limit,
        jobs=jobs,
        on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c),
        on_start=lambda s: emit("trial_start", spec=s),
    )


def _hang_limit(captured: CapturedFailure, emit: Emit) -> float | None:
    """A captured hang's trials are judged by time: the limit the capture sets (said), None for another kind."""
    if captured.failure.get("kind") != "hang":
        return None
    limit, why = hang_limit(captured.failure)
    emit("note", text=f"a hang: each trial may take {limit:.0f} s ({why}; --timeout sets another)")
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


def _check_options(jobs: int | None, timeout: float | None, ranks: int) -> None:
    guards.trial_options(jobs, timeout)
    if ranks != 1:  # the capture holds the failing rank's graph: its trials need no launcher and no other rank
        raise ReprokitError(
            "--from-capture replays the failing rank's graph in one process: drop --nproc-per-node "
            f"{ranks} (torchrun's job was captured already)"
        )


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
