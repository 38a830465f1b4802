"""`reprokit minify RUN_DIR` (and bisect's minify step): the guards, then the graph, export or source minifier; the
verdict with its `Repro`."""

from __future__ import annotations

import dataclasses
import os
from contextlib import AbstractContextManager, nullcontext

from reprokit.app.common import executor_of, noop, run_kind
from reprokit.app.runners import open_runner
from reprokit.app.verdict_file import isolation_of, with_repro, with_run
from reprokit.data.events import Emit, Event
from reprokit.data.executor import ExecutorSettings
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict
from reprokit.errors import EXIT_MORE_ACCURATE, ReprokitError
from reprokit.export.ladder import FAILING_STAGES
from reprokit.export.rerun import minify_export_run
from reprokit.minify.minifier import CompiledIsCloser, minify_isolation
from reprokit.report.bisect_report import load_verdict
from reprokit.trial.executors import check_executor
from reprokit.trial.runner import Runner

# Said (after "not minified: ") when a slowdown is bisected: there is no failing graph to cut.
SLOW_REASON = "minify cuts graphs that fail; a slowdown is reported with its stage, config and mode"
# An out-of-memory depends on all the process holds: a graph cut out of it would not run out alone.
MEMORY_REASON = "an out-of-memory is reported with its stage and both peaks; a graph alone would not run out"
# Every cut runs under reprokit's router, which hides this failure (bisect/plain.py).
PLAIN_REASON = (
    "the failure shows only in the script run as written, and every cut runs under reprokit's instrumentation, "
    "which hides it: the script itself is the repro"
)


def refusal(iso: Isolation) -> str | None:
    """Why this isolation must not be minified, or None: a flaky failure too rare to ask each cut until it fails, a
    slowdown (bisect --kind slow) has no failure to keep while cutting, nor has memory only compiled code needs."""
    if iso.flaky and not iso.flaky_tries:
        return (
            f"the failure is flaky (it reproduced in {iso.repro_rate or 0:.0%} of runs), too rarely to ask each cut "
            "until it fails"
        )
    if iso.kind == OutcomeKind.SLOW:
        return SLOW_REASON
    if iso.memory is not None:
        return MEMORY_REASON
    if iso.plain_run is not None:
        return PLAIN_REASON
    return None


def more_accurate(iso: Isolation, closer: CompiledIsCloser) -> dict:
    """What the run says when compiled is the closer to float64: its RunInfo fields (the command exits 4)."""
    return {
        "more_accurate": {"graph": iso.graph, "note": closer.message, "case": closer.case},
        "exit_code": EXIT_MORE_ACCURATE,
    }


@dataclasses.dataclass(frozen=True)
class Minified:
    """The minify phase of a bisect: its Repro (None: none made), what the run adds when compiled is the closer to
    float64 (RunInfo's fields), the folder the failing graph was captured in (the first diverging node is asked of
    it), and whether the run's budget was spent before it was asked."""

    repro: Repro | None = None
    run: dict = dataclasses.field(default_factory=dict)
    case: str | None = None
    unasked: bool = False


def minify_phase(
    run_dir: RunDir,
    isolation: Isolation,
    facts: RunFacts,
    runner: Runner,
    emit: Emit,
    wanted: bool,
    spent: bool,
    command: str,
) -> Minified:
    """bisect's minify step, when wanted and the isolation allows (the export path's failures too, #20: make_repro
    picks their minifier); spent: the budget ended before it, so it is not asked."""
    repro, run = None, {}
    reason = refusal(isolation) if wanted and isolation.failing_stage else ""
    if reason is None and not spent:
        try:
            repro = make_repro(run_dir, isolation, facts, runner=runner, emit=emit, command=command)
        except CompiledIsCloser as e:
            run = more_accurate(isolation, e)
    elif reason in (SLOW_REASON, MEMORY_REASON, PLAIN_REASON):
        emit(Event.NOTE, text="not minified: " + reason)
    # the folder minify captured the failing graph in (the first diverging node is asked of it), if any: this
    # minify's last cut, else an earlier (interrupted) minify's of this folder, else the bisect's own
    case = (run.get("more_accurate") or {}).get("case") or (repro.case if repro is not None else None)
    if not case:
        case = facts.minified.get("case") if facts.minified is not None else isolation.graph_case
    return Minified(repro, run, case, unasked=reason is None and spent)


def minify_folder(
    run_dir: str | RunDir,
    *,
    runner: Runner | None = None,
    emit: Emit = noop,
    resume: bool = False,
    command: str = "",
    executor: ExecutorSettings | None = None,
) -> Verdict:
    """`reprokit minify RUN_DIR`: the failing graph (or source) of a finished bisect run cut to a verified repro.py;
    the verdict it read, with the repro, written."""
    run_dir = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    kind = run_kind(run_dir)
    if kind != "bisect":
        raise ReprokitError(f"{run_dir.path} is a {kind} run folder; minify works on the folder reprokit bisect wrote")
    verdict, info = load_verdict(run_dir), run_dir.read_json("run.json")
    check_rerunnable(verdict, info.get("python"))
    # read once here: the search of --resume starts from the smallest graph the earlier minify saved
    facts = RunFacts.of(info, run_dir.read_json("minify.json") if resume and run_dir.exists("minify.json") else None)
    settings = executor_of(run_dir, executor)
    with _folder_runner(run_dir, info, verdict.isolation.script, settings, runner, emit) as runner:
        try:
            repro = make_repro(
                run_dir, isolation_of(verdict), facts, runner=runner, emit=emit, resume=resume, command=command
            )
            return with_repro(run_dir, verdict, repro)
        except CompiledIsCloser as e:
            # The verdict is finished (configs, numerics, the first diverging node asked after); the command exits 4.
            return with_run(run_dir, verdict, **more_accurate(verdict.isolation, e))


def _folder_runner(
    run_dir: RunDir, info: dict, script: str, settings: ExecutorSettings | None, runner: Runner | None, emit: Emit
) -> AbstractContextManager[Runner]:
    """The runner given, else one opened as bisect's own minify runs: its jobs side by side, each a fork of the warm
    worker where the script allows (a source reduction started cold, one candidate at a time, paid `import torch`
    in each). (--kind slow times whole runs: those stay plain interpreters, as bisect ran them.) On the cluster: one
    job at a time, cold."""
    if runner is not None:
        return nullcontext(runner)
    opts = info["options"]  # run.json's
    warm = script if opts.get("kind", "failure") == "failure" else None
    jobs = int(opts.get("jobs") or 1)
    if settings is not None and settings.name != "local":
        check_executor(settings, os.path.dirname(run_dir.path))
        jobs, warm = 1, None
    return open_runner(
        run_dir, emit, timeout=opts.get("timeout") or 600.0, jobs=jobs, settings=settings, warm_script=warm
    )


def check_rerunnable(verdict: Verdict, python: str | None) -> None:
    """One line, exit 2, when the script or the interpreter (run.json's "python") the bisect ran is gone (a run
    folder copied to another machine, a worktree removed): minify runs both again."""
    for what, path in (("script", verdict.isolation.script), ("interpreter", python)):
        if path and not os.path.exists(path):
            raise ReprokitError(
                f"the {what} this run's bisect ran, {path}, is gone: minify runs it again; put it back at that path, "
                "or bisect the script where it is now"
            )


def make_repro(
    run_dir: RunDir,
    isolation: Isolation,
    facts: RunFacts,
    *,
    runner: Runner,
    emit: Emit = noop,
    resume: bool = False,
    command: str = "",
) -> Repro:
    """The minify phase: the repro of an isolation (the export path's minifiers for its failures, #20, else the
    graph's or the source's). Raises CompiledIsCloser when the script's check saw compiled the closer to float64
    (not "nothing to isolate": a user who needs eager's bits acts on the setting that gives them back)."""
    reason = refusal(isolation)
    if reason:
        raise ReprokitError(f"not minified: {reason}")
    if isolation.flaky_tries and runner.policy.tries == 1:
        # A flaky failure: each cut asked until it fails that way, as the bisect asked each question.
        runner = runner.with_policy(tries=isolation.flaky_tries, target=Signature.from_dict(isolation.signature))
    if isolation.failing_stage in FAILING_STAGES:  # no Dynamo graph there: it says its phase once its input checks
        return minify_export_run(run_dir, isolation, facts, runner, emit, command)
    if not isolation.warm_cache:  # its repro is the script run cold then warm: nothing is cut (minify/warm_repro)
        emit(Event.PHASE, name="minify")
    return minify_isolation(run_dir, isolation, runner, emit, facts, resume=resume)
