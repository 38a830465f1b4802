"""Use cases: bisect, minify, pack. They emit events and return plain data; they never print."""
from __future__ import annotations

import ast
import dataclasses
import os
import sys
from typing import Callable, Optional

from reprokit.bisect.bisector import BisectOptions, Bisector
from reprokit.errors import ReprokitError
from reprokit.data.records import Verdict
from reprokit.trial.runner import Runner
from reprokit.data.rundir import RunDir

Emit = Callable[..., None]


def _noop(*_a, **_k):
    pass


def check_script(path: str) -> str:
    """Absolute path of a runnable Python script, or a ReprokitError saying what is wrong with it."""
    if not os.path.exists(path):
        raise ReprokitError(f"no such script: {path}")
    if os.path.isdir(path):
        raise ReprokitError(f"{path} is a directory; pass the Python script that calls torch.compile")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise ReprokitError(f"cannot read {path}: {e.strerror}")
    try:
        ast.parse(source, filename=path)
    except SyntaxError as e:
        raise ReprokitError(f"{path}:{e.lineno}: syntax error: {e.msg}; fix the script, then run reprokit again")
    return os.path.abspath(path)


def forks_cleanly(script: str) -> bool:
    """Whether the script may run as a fork of a worker that imported torch already: not when it sets
    environment variables (torch reads many at import, so in a fork they would come too late) or re-executes
    itself. A script that hides such things in a local module is not caught; REPROKIT_WARM=0 runs it cold."""
    try:
        with open(script, encoding="utf-8", errors="replace") as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name in ("environ", "putenv", "execv", "execve", "execvp", "execl", "execle", "set_start_method"):
            return False
    return True


def recorded_environment() -> dict:
    """The allowlisted environment for run.json; secret-named values are never written, not even locally."""
    from reprokit.report.env import allowed_env
    from reprokit.report.redact import SECRET_NAME

    return {k: ("<set, value withheld>" if SECRET_NAME.search(k) else v) for k, v in allowed_env().items()}


def bisect(script: str, argv: tuple = (), *, output_dir: Optional[str] = None, timeout: Optional[float] = None,
           jobs: Optional[int] = None, repeat: int = 1, check_accuracy: bool = False, configs: bool = True,
           subsystems: bool = True, minify: bool = True, pack: bool = True, max_input_bytes: int = 64 << 20,
           kind: str = "failure", slow_threshold: float = 0.10, command: str = "", emit: Emit = _noop) -> Verdict:
    """Run the whole bisect: ladder, graph, configs, subsystems; then minify and pack unless told not to."""
    script = check_script(script)
    cwd = os.getcwd()
    base = output_dir or os.path.join(cwd, "artifacts")
    run = RunDir.create(base, os.path.splitext(os.path.basename(script))[0])
    from reprokit.trial.devices import cuda_devices

    gpus = cuda_devices()
    # Several GPUs: one trial per GPU at a time. Otherwise the CPU cores (at most 4) set the pace.
    devices = gpus if len(gpus) > 1 else None
    if jobs is None:
        jobs = len(gpus) if devices else default_jobs()
    if kind == "slow" and jobs > 1:
        # Trials side by side would slow each other down and make the timings lie.
        jobs = 1
        emit("note", text="--kind slow runs one trial at a time: parallel trials would distort the timings")
    opts = BisectOptions(script=script, argv=tuple(argv), cwd=cwd, timeout=timeout, jobs=jobs, repeat=max(1, repeat),
                         check_accuracy=check_accuracy, configs=configs, subsystems=subsystems, kind=kind,
                         slow_threshold=slow_threshold)
    environment = recorded_environment()
    run.write_json("run.json", {"command": command, "options": dataclasses.asdict(opts), "python": sys.executable,
                                "max_input_bytes": max_input_bytes, "environment": environment})
    emit("run_dir", path=run.path)
    # --kind slow compares the timings of whole runs: those stay plain interpreters, like the user's own runs.
    runner = Runner(run, timeout=timeout or 600.0, jobs=jobs, devices=devices,
                    warm_scripts=kind == "failure" and forks_cleanly(script),
                    on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))
    verdict = Bisector(opts, runner, emit).run()
    verdict.run_dir = run.path
    run.write_json("verdict.json", verdict.to_dict())
    if minify and verdict.failing_stage and not verdict.flaky and verdict.kind == "slow":
        emit("note", text="not minified: minify cuts graphs that fail; a slowdown is reported with its stage, "
                          "config and mode")
    elif minify and verdict.failing_stage and not verdict.flaky:
        from reprokit.minify.run import minify_run

        verdict = minify_run(run, runner=runner, emit=emit)
    if pack:
        from reprokit.report.pack import pack_run

        verdict.tarball = pack_run(run, emit=emit)
        run.write_json("verdict.json", verdict.to_dict())
    return verdict


def default_jobs() -> int:
    """Trials at once on a machine without several GPUs: the CPU cores this process may use, at most 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def load_verdict(run_dir: str) -> Verdict:
    run = RunDir.open(run_dir)
    if not run.exists("verdict.json"):
        raise ReprokitError(f"{run_dir} has no verdict.json yet; run reprokit bisect to completion first")
    return Verdict.from_dict(run.read_json("verdict.json"))


def doctor(script: str, argv: tuple = (), *, output_dir: Optional[str] = None, timeout: Optional[float] = None,
           command: str = "", emit: Emit = _noop):
    """Run the script once eager and once compiled (isolated), and explain what Dynamo did: breaks,
    recompilations, fall-backs and speed, each finding with a fix. Writes doctor.json and DOCTOR.md."""
    from reprokit.doctor.analysis import analyze
    from reprokit.data.records import TrialSpec, file_hash
    from reprokit.errors import NothingToIsolate
    from reprokit.trial.runner import read_observed, trial_record

    script = check_script(script)
    cwd = os.getcwd()
    run = RunDir.create(output_dir or os.path.join(cwd, "artifacts"),
                        "doctor-" + os.path.splitext(os.path.basename(script))[0])
    environment = recorded_environment()
    run.write_json("run.json", {"kind": "doctor", "command": command, "script": script, "argv": list(argv),
                                "cwd": cwd, "python": sys.executable, "environment": environment})
    emit("run_dir", path=run.path)
    runner = Runner(run, timeout=timeout or 600.0, jobs=1,
                    on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))

    def spec(stage, label):
        return TrialSpec(mode="script", stage=stage, script=script, argv=tuple(argv), cwd=cwd,
                         script_hash=file_hash(script), observe=True, label=label)

    # One after the other, never in parallel: the two runs' step times are compared.
    eager = runner(spec("none", "eager"))
    emit("stage", stage="none", outcome=eager)
    if eager.failed:
        raise NothingToIsolate(f"the script fails without torch.compile ({eager.signature.short()}); "
                               "fix that first, doctor explains compiled runs of a working script")
    if timeout is None:
        runner.timeout = max(300.0, 10 * eager.seconds)
    compiled = runner(spec("user", "compiled"))
    emit("stage", stage="user", outcome=compiled)
    if not compiled.compiled:
        raise ReprokitError(f"{os.path.basename(script)} never calls torch.compile; doctor explains compiled code")
    observed = [read_observed(o.trial_dir) for o in (eager, compiled)]
    sources = [script] + (trial_record(compiled.trial_dir).get("local_modules") or [])
    lines = {}
    for path in sources:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines[path] = f.read().splitlines()
        except OSError:
            pass
    outcome = {"kind": compiled.kind, "message": compiled.signature.short(), "user_backend": compiled.user_backend}
    report = analyze(script, tuple(argv), observed[0], observed[1], outcome, lines)
    report.run_dir = run.path
    report.trials = {"eager": eager.trial_dir, "compiled": compiled.trial_dir}
    run.write_json("doctor.json", report.to_dict())
    from reprokit.report.render import environment as templates

    run.write_text("DOCTOR.md", templates().get_template("DOCTOR.md.j2").render(r=report, name=os.path.basename(script),
                                                                                command=command))
    return report
