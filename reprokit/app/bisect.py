"""`reprokit bisect`: a fresh run, or the continuation of an interrupted one (--resume) from its journal."""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from reprokit.app import guards
from reprokit.app import minify as minify_case
from reprokit.app import versions as versions_case
from reprokit.app.common import (
    Emit,
    check_script,
    default_jobs,
    executor_of,
    forks_cleanly,
    noop,
    record_secrets,
    recorded_environment,
    run_kind,
    trial_runner,
)
from reprokit.app.pack import packed
from reprokit.app.verdict_file import isolated, with_evidence, with_fields
from reprokit.bisect.bisector import BisectOptions, Bisector
from reprokit.data.budget import said
from reprokit.data.executor import ExecutorSettings
from reprokit.data.records import Verdict
from reprokit.data.rundir import RunDir
from reprokit.errors import ReprokitError
from reprokit.export.ladder import isolate_deployment
from reprokit.trial.devices import cuda_devices
from reprokit.trial.executors import check_executor


def pinned_devices() -> list | None:
    """Several GPUs: one trial per GPU at a time (the list). Otherwise None: the CPU cores set the pace."""
    gpus = cuda_devices()
    return gpus if len(gpus) > 1 else None


def bisect_script(
    script: str,
    argv: tuple = (),
    *,
    output_dir: str | None = None,
    timeout: float | None = None,
    jobs: int | None = None,
    repeat: int = 1,
    check_accuracy: bool = False,
    configs: bool = True,
    subsystems: bool = True,
    minify: bool = True,
    pack: bool = True,
    max_input_bytes: int = 64 << 20,
    ranks: int = 1,
    kind: str = "failure",
    slow_threshold: float = 0.10,
    command: str = "",
    versions: bool = False,
    executor: ExecutorSettings | None = None,
    budget: float | None = None,
    emit: Emit = noop,
) -> Verdict:
    """Run the whole bisect: ladder, graph, configs, subsystems; then minify and pack unless told not to; with
    versions, the failure under other torch releases last (reprokit versions, its cost said first). budget:
    seconds the whole run may take (the verdict is always finished; what comes after it stops when they are
    spent)."""
    started = time.monotonic()
    script = check_script(script)
    guards.bisect_options(jobs, timeout, ranks, repeat, max_input_bytes, slow_threshold)
    if versions:
        emit("note", text="after the bisect, " + versions_case.cost_line(versions_case.plan(None)))
    cwd = os.getcwd()
    output_dir = output_dir or os.path.join(cwd, "artifacts")
    run_dir = new_run_dir(script, output_dir, executor)
    devices = pinned_devices()
    jobs = trial_jobs(jobs, devices, kind, emit)
    opts = BisectOptions(
        script=script,
        argv=tuple(argv),
        cwd=cwd,
        timeout=timeout,
        jobs=jobs,
        repeat=max(1, repeat),
        check_accuracy=check_accuracy,
        configs=configs,
        subsystems=subsystems,
        kind=kind,
        slow_threshold=slow_threshold,
        ranks=ranks,
    )
    record_run(run_dir, opts, command, max_input_bytes, {"minify": minify, "pack": pack, "budget": budget}, executor)
    emit("run_dir", path=run_dir.path)
    verdict = bisect_in(
        run_dir, opts, devices, minify=minify, pack=pack, emit=emit, budget=Budget(budget, started) if budget else None
    )
    if versions and verdict.failing_stage and verdict.signature:
        emit("phase", name="versions")
        verdict = versions_case.versions_after_bisect(run_dir, verdict, emit=emit)
    return verdict


def new_run_dir(script: str, output_dir: str, executor: ExecutorSettings | None) -> RunDir:
    """The run's folder under output_dir, named for the script, once the executor is known to work there."""
    check_executor(executor, output_dir)  # no sbatch, no such partition, a folder the nodes cannot see: exit 2
    run_dir = RunDir.create(output_dir, os.path.splitext(os.path.basename(script))[0])
    record_secrets(run_dir)
    return run_dir


def trial_jobs(jobs: int | None, devices: list | None, kind: str, emit: Emit) -> int:
    """Trials at a time: as asked, else one per pinned GPU or the CPU cores' default; one for --kind slow."""
    if jobs is None:
        jobs = len(devices) if devices else default_jobs()
    if kind == "slow" and jobs > 1:
        # Trials side by side would slow each other down and make the timings lie.
        jobs = 1
        emit("note", text="--kind slow runs one trial at a time: parallel trials would distort the timings")
    return jobs


def record_run(run_dir, opts, command: str, max_input_bytes: int, steps: dict, executor) -> None:
    """run.json: the command, options and environment of the run. steps: what --resume does after the verdict,
    as this run was asked to."""
    run_dir.write_json(
        "run.json",
        {
            "command": command,
            "options": dataclasses.asdict(opts),
            "python": sys.executable,
            "max_input_bytes": max_input_bytes,
            "environment": recorded_environment(),
            "steps": steps,
            "executor": executor.to_dict() if executor else None,
        },
    )


def resume_bisect(run_dir: str, *, minify: bool = True, pack: bool = True, emit: Emit = noop) -> Verdict:
    """Continue an interrupted bisect in its own folder, with the options run.json recorded: trials the journal
    holds are answered from it, the rest run. --no-minify / --no-pack may still turn those steps off."""
    folder = RunDir.open(run_dir)
    kind = run_kind(folder)
    info = folder.read_json("run.json")
    if kind != "bisect" or "options" not in info:
        raise ReprokitError(f"{folder.path} is a {kind} run folder; --resume continues a folder reprokit bisect wrote")
    if info.get("capture"):  # resuming as a script bisect would run the job the capture was made to spare
        raise ReprokitError(
            f"{folder.path} was bisected from a capture; run reprokit bisect --from-capture "
            f"{info['capture'].get('from')} again"
        )
    recorded = info["options"]
    opts = BisectOptions(**{**recorded, "argv": tuple(recorded.get("argv") or ())})
    check_script(opts.script)
    steps = info.get("steps") or {}
    emit("run_dir", path=folder.path)
    emit("note", text=f"resuming: {len(folder.journal())} finished trials in the journal are not run again")
    check_executor(executor_of(folder), os.path.dirname(folder.path))
    return bisect_in(
        folder,
        opts,
        pinned_devices(),
        minify=minify and steps.get("minify", True),
        pack=pack and steps.get("pack", True),
        emit=emit,
        budget=Budget(steps["budget"], time.monotonic()) if steps.get("budget") else None,
    )


def bisect_in(
    run_dir: RunDir,
    opts: BisectOptions,
    devices: list | None,
    *,
    minify: bool,
    pack: bool,
    emit: Emit,
    budget: Budget | None = None,
) -> Verdict:
    """The phases in a prepared run folder: the isolation, its repro (when allowed), the evidence asked after it,
    the pack; the verdict built from their results and written after each."""
    # --kind slow compares the timings of whole runs: those stay plain interpreters, like the user's own runs.
    runner = trial_runner(
        run_dir,
        executor_of(run_dir),
        emit,
        opts.timeout or 600.0,
        opts.jobs,
        devices=devices,
        warm_scripts=opts.kind == "failure" and forks_cleanly(opts.script),
    )
    try:
        return _phases(run_dir, opts, runner, minify=minify, pack=pack, emit=emit, budget=budget)
    finally:
        runner.close()  # the warm worker, and on a cluster every job still queued or running


@dataclasses.dataclass(frozen=True)
class Budget:
    """--budget: its seconds, from the run's start (time.monotonic)."""

    seconds: float
    started: float

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def spent(self) -> bool:
        return time.monotonic() >= self.deadline


def _phases(
    run_dir: RunDir, opts: BisectOptions, runner, *, minify: bool, pack: bool, emit: Emit, budget: Budget | None = None
) -> Verdict:
    """isolate, minify, the deferred evidence, pack: each phase's result into the verdict file. With a budget, the
    verdict is always finished; past its end nothing more is asked but a repro's own checks, and the run says what
    was not asked."""
    bisector = Bisector(opts, runner, emit, deployment=isolate_deployment)
    isolation = bisector.isolate()
    verdict = isolated(run_dir, isolation)
    runner = bisector.use_policy(deadline=budget.deadline if budget else None)
    not_asked: list = []
    if minify and verdict.failing_stage:
        reason = minify_case.refusal(verdict)
        if reason is None and budget and budget.spent():
            not_asked.append("minify")
        elif reason is None:  # the export path's failures too (#20): make_repro picks their minifier
            verdict = minify_case.minify_verdict(
                run_dir, verdict, runner=runner, emit=emit, command=f"reprokit bisect {os.path.basename(opts.script)}"
            )
        elif reason in (minify_case.SLOW_REASON, minify_case.MEMORY_REASON, minify_case.PLAIN_REASON):
            emit("note", text="not minified: " + reason)
    if isolation.deferred and budget and budget.spent():
        not_asked += list(isolation.deferred)
    elif isolation.deferred:
        verdict = with_evidence(run_dir, verdict, bisector.after_repro(isolation, case=graph_case(run_dir, verdict)))
    if budget:
        verdict = with_fields(run_dir, verdict, budget=_budget_record(budget, not_asked, runner.over_budget, emit))
    if pack:
        verdict = packed(run_dir, verdict, emit)
    return verdict


def graph_case(run_dir: RunDir, verdict: Verdict) -> str | None:
    """The folder minify captured the failing graph in (the first diverging node is asked of it), if any."""
    closer = (verdict.more_accurate or {}).get("case")
    if closer:
        return closer
    if run_dir.exists("minify.json"):
        return run_dir.read_json("minify.json").get("case")
    return verdict.graph_case


def _budget_record(budget: Budget, not_asked: list, trials_not_run: int, emit: Emit) -> dict:
    """verdict.json's budget: spent or not, what was never asked, the search trials not run; said as a note."""
    spent = bool(not_asked or trials_not_run)
    if spent:
        parts = [
            f"not asked: {', '.join(not_asked)}" if not_asked else "",
            f"{trials_not_run} search trials not run, so repro.py (when written) is the smallest verified so "
            "far, not a minimal one"
            if trials_not_run
            else "",
        ]
        emit("note", text=f"the budget of {said(budget.seconds)} was spent: " + "; ".join(p for p in parts if p))
    return {"seconds": budget.seconds, "spent": spent, "not_asked": not_asked, "trials_not_run": trials_not_run}
