"""`reprokit bisect`: a fresh run, or the continuation of an interrupted one (--resume) from its journal."""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from reprokit.app import guards
from reprokit.app import versions as versions_case
from reprokit.app.common import (
    check_script,
    default_jobs,
    executor_of,
    local_start,
    new_run,
    noop,
    recorded_environment,
    run_kind,
)
from reprokit.app.pipeline import Steps, run_phases
from reprokit.app.request import BisectRequest
from reprokit.app.runners import open_script_runner
from reprokit.bisect.bisector import BisectOptions, Bisector
from reprokit.data.budget import Budget
from reprokit.data.events import Emit, Event
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import ReprokitError
from reprokit.export.ladder import isolate_deployment
from reprokit.trial.devices import cuda_devices
from reprokit.trial.executors import check_executor


def pinned_devices() -> list | None:
    """Several GPUs: one trial per GPU at a time (the list). Otherwise None: the CPU cores set the pace."""
    gpus = cuda_devices()
    return gpus if len(gpus) > 1 else None


def bisect_script(script: str, argv: tuple = (), request: BisectRequest | None = None, emit: Emit = noop) -> Verdict:
    """Run the whole bisect: ladder, graph, configs, subsystems; then minify and pack unless told not to; with
    versions, the failure under other torch releases last (reprokit versions, its cost said first)."""
    started = time.monotonic()
    r = request or BisectRequest()
    script = check_script(script)
    guards.bisect_options(r.jobs, r.timeout, r.ranks, r.repeat, r.max_input_bytes, r.slow_threshold)
    if r.versions:
        emit(Event.NOTE, text="after the bisect, " + versions_case.cost_line(versions_case.plan(None)))
    cwd = os.getcwd()
    output_dir = r.output_dir or os.path.join(cwd, "artifacts")
    check_executor(r.executor, output_dir)  # no sbatch, no such partition, a folder the nodes cannot see: exit 2
    devices = pinned_devices()
    jobs = trial_jobs(r.jobs, devices, r.kind, emit)
    opts = BisectOptions(
        script=script,
        argv=tuple(argv),
        cwd=cwd,
        timeout=r.timeout,
        jobs=jobs,
        repeat=max(1, r.repeat),
        check_accuracy=r.check_accuracy,
        configs=r.configs,
        subsystems=r.subsystems,
        kind=r.kind,
        slow_threshold=r.slow_threshold,
        ranks=r.ranks,
    )
    # run.json: the command, options and environment of the run; steps: what --resume does after the verdict
    record = {
        "command": r.command,
        "options": dataclasses.asdict(opts),
        "python": sys.executable,
        "max_input_bytes": r.max_input_bytes,
        "environment": recorded_environment(),
        "steps": {"minify": r.minify, "pack": r.pack, "budget": r.budget},
        "executor": r.executor.to_dict() if r.executor else None,
    }
    run_dir = new_run(output_dir, os.path.splitext(os.path.basename(script))[0], record)
    emit(Event.RUN_DIR, path=run_dir.path)
    budget = Budget.of(r.budget, started)
    steps = Steps(r.minify, r.pack, f"reprokit bisect {os.path.basename(script)}")
    with open_script_runner(run_dir, emit, opts, devices, r.executor) as runner:
        bisector = Bisector(opts, runner, emit, deployment=isolate_deployment)
        facts = RunFacts.of(record)  # what run.json holds, handed down: nothing below reads it back
        verdict = run_phases(run_dir, facts, bisector, runner, steps, emit, budget, local_start(started, r.executor))
    if r.versions and verdict.isolation.failing_stage and verdict.isolation.signature:
        emit(Event.PHASE, name="versions")
        verdict = versions_case.versions_after_bisect(run_dir, verdict, emit=emit)
    return verdict


def trial_jobs(jobs: int | None, devices: list | None, kind: str, emit: Emit) -> int:
    """Trials at a time: as asked, else one per pinned GPU or the CPU cores' default; one for --kind slow."""
    if jobs is None:
        jobs = len(devices) if devices else default_jobs()
    if kind == "slow" and jobs > 1:
        # Trials side by side would slow each other down and make the timings lie.
        jobs = 1
        emit(Event.NOTE, text="--kind slow runs one trial at a time: parallel trials would distort the timings")
    return jobs


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
    # read once here: an interrupted minify's minify.json names the case the evidence asks of where this one cuts none
    facts = RunFacts.of(info, folder.read_json("minify.json") if folder.exists("minify.json") else None)
    opts = BisectOptions(**{**recorded, "argv": tuple(recorded.get("argv") or ())})
    check_script(opts.script)
    steps = info.get("steps") or {}
    emit(Event.RUN_DIR, path=folder.path)
    emit(Event.NOTE, text=f"resuming: {len(folder.journal())} finished trials in the journal are not run again")
    settings = executor_of(folder)
    check_executor(settings, os.path.dirname(folder.path))
    named = f"reprokit bisect {os.path.basename(opts.script)}"
    phases = Steps(minify and steps.get("minify", True), pack and steps.get("pack", True), named)
    started = time.monotonic()  # a resume keeps to its own time plan, as to its own --budget
    budget = Budget.of(steps.get("budget"), started)
    with open_script_runner(folder, emit, opts, pinned_devices(), settings) as runner:
        bisector = Bisector(opts, runner, emit, deployment=isolate_deployment)
        return run_phases(folder, facts, bisector, runner, phases, emit, budget, local_start(started, settings))
