"""`reprokit doctor`: run the script once eager and once compiled, and explain what Dynamo did."""

from __future__ import annotations

import os
import sys

from reprokit.app import guards
from reprokit.app.common import check_script, noop, record_secrets, recorded_environment
from reprokit.app.runners import open_runner
from reprokit.data.doctor import DoctorReport
from reprokit.data.events import Emit, Event
from reprokit.data.ranks import needs_launcher
from reprokit.data.records import Outcome, TrialSpec, file_hash
from reprokit.data.rundir import RunDir
from reprokit.data.trial_files import read_observed, trial_record
from reprokit.doctor.analysis import analyze
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.report.render import environment as templates
from reprokit.trial.runner import Runner


def source_lines(paths: list) -> dict:
    """{path: its lines} of the script and its local modules, for the findings' code quotes."""
    lines = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines[path] = f.read().splitlines()
        except OSError:
            pass
    return lines


def eager_then_compiled(
    runner: Runner, script: str, argv: tuple, cwd: str, timeout: float | None, emit: Emit, ranks: int = 1
) -> tuple[Outcome, Outcome]:
    """The two runs, one after the other, never in parallel: their step times are compared. With ranks > 1
    each is a torchrun job, and rank 0's observations are the report's."""

    def spec(stage, label):
        return TrialSpec(
            mode="script",
            stage=stage,
            script=script,
            argv=tuple(argv),
            cwd=cwd,
            script_hash=file_hash(script),
            observe=True,
            ranks=ranks,
            label=label,
        )

    eager = runner(spec("none", "eager"))
    emit(Event.STAGE, stage="none", outcome=eager)
    if eager.failed and ranks == 1 and needs_launcher(eager.traceback or eager.signature.message):
        name = os.path.basename(script)
        raise ReprokitError(
            f"{name} initialises torch.distributed from the environment (env://) but no launcher "
            f"started it: run reprokit doctor --nproc-per-node N {name}"
        )
    if eager.failed:
        raise NothingToIsolate(
            f"the script fails without torch.compile ({eager.signature.short()}); "
            "fix that first, doctor explains compiled runs of a working script"
        )
    if timeout is None:
        runner = runner.with_policy(timeout=max(300.0, 10 * eager.seconds))
    compiled = runner(spec("user", "compiled"))
    emit(Event.STAGE, stage="user", outcome=compiled)
    if not compiled.compiled:
        raise ReprokitError(f"{os.path.basename(script)} never calls torch.compile; doctor explains compiled code")
    return eager, compiled


def doctor_script(
    script: str,
    argv: tuple = (),
    *,
    output_dir: str | None = None,
    timeout: float | None = None,
    ranks: int = 1,
    command: str = "",
    emit: Emit = noop,
) -> DoctorReport:
    """Run the script once eager and once compiled (isolated), and explain what Dynamo did: breaks,
    recompilations, fall-backs and speed, each finding with a fix. Writes doctor.json and DOCTOR.md."""
    script = check_script(script)
    guards.above_zero("--timeout", timeout, "seconds per run")
    guards.at_least_one("--nproc-per-node", ranks, "a number of ranks")
    cwd = os.getcwd()
    run_dir = RunDir.create(
        output_dir or os.path.join(cwd, "artifacts"), "doctor-" + os.path.splitext(os.path.basename(script))[0]
    )
    record_secrets(run_dir)
    run_dir.write_json(
        "run.json",
        {
            "kind": "doctor",
            "command": command,
            "script": script,
            "argv": list(argv),
            "cwd": cwd,
            "python": sys.executable,
            "environment": recorded_environment(),
        },
    )
    emit(Event.RUN_DIR, path=run_dir.path)
    with open_runner(run_dir, emit, timeout=timeout or 600.0) as runner:
        eager, compiled = eager_then_compiled(runner, script, argv, cwd, timeout, emit, ranks)
    observed = [read_observed(o.trial_dir) for o in (eager, compiled)]
    lines = source_lines([script] + (trial_record(compiled.trial_dir).get("local_modules") or []))
    outcome = {"kind": compiled.kind, "message": compiled.signature.short(), "user_backend": compiled.user_backend}
    report = analyze(script, tuple(argv), observed[0], observed[1], outcome, lines)
    report.run_dir = run_dir.path
    report.trials = {"eager": eager.trial_dir, "compiled": compiled.trial_dir}
    run_dir.write_json("doctor.json", report.to_dict())
    run_dir.write_text(
        "DOCTOR.md",
        templates().get_template("DOCTOR.md.j2").render(r=report, name=os.path.basename(script), command=command),
    )
    return report
