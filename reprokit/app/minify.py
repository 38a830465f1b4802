"""`reprokit minify RUN_DIR` (and bisect's minify step): the guards, then the graph or source minifier."""
from __future__ import annotations

from typing import Optional, Union

from reprokit.app.common import Emit, forks_cleanly, noop, run_kind
from reprokit.data.records import Verdict
from reprokit.data.rundir import RunDir
from reprokit.errors import ReprokitError
from reprokit.export.ladder import FAILING_STAGES
from reprokit.export.rerun import minify_export_run
from reprokit.minify.run import minify_run
from reprokit.report.bisect_report import load_verdict
from reprokit.trial.runner import Runner

# Said (after "not minified: ") when a slowdown is bisected: there is no failing graph to cut.
SLOW_REASON = "minify cuts graphs that fail; a slowdown is reported with its stage, config and mode"
# An out-of-memory depends on all the process holds: a graph cut out of it would not run out alone.
MEMORY_REASON = "an out-of-memory is reported with its stage and both peaks; a graph alone would not run out"


def refusal(v: Verdict) -> Optional[str]:
    """Why this verdict must not be minified, or None: a flaky failure would send the search astray, a
    slowdown (bisect --kind slow) has no failure to keep while cutting, nor has memory only compiled code needs."""
    if v.flaky:
        return (f"the failure is flaky (it reproduced in {v.repro_rate or 0:.0%} of runs); minify needs a failure "
                "that reproduces every time")
    if v.kind == "slow":
        return SLOW_REASON
    if v.memory is not None:
        return MEMORY_REASON
    return None


def run(run_dir: Union[str, RunDir], *, runner: Optional[Runner] = None, emit: Emit = noop,
        resume: bool = False, command: str = "") -> Verdict:
    """Minify the failing graph (or source) of a finished bisect run and write a verified repro.py."""
    run = run_dir if isinstance(run_dir, RunDir) else RunDir.open(run_dir)
    kind = run_kind(run)
    if kind != "bisect":
        raise ReprokitError(f"{run.path} is a {kind} run folder; minify works on the folder reprokit bisect wrote")
    v = load_verdict(run)
    reason = refusal(v)
    if reason:
        raise ReprokitError(f"not minified: {reason}")
    emit("phase", name="minify")
    if v.failing_stage in FAILING_STAGES:  # the export path (#20): no Dynamo graph; its own minifiers
        return minify_export_run(run, v, runner or export_runner(run, v, emit), emit, command)
    return minify_run(run, runner=runner, emit=emit, resume=resume)


def export_runner(run: RunDir, v: Verdict, emit: Emit) -> Runner:
    """The runner bisect had: its parallel trials, and forks of a warm worker where the script allows (a source
    reduction runs hundreds of short trials; each importing torch afresh would take ten times as long)."""
    opts = run.read_json("run.json")["options"]
    return Runner(run, timeout=opts.get("timeout") or 600.0, jobs=int(opts.get("jobs") or 1),
                  warm_scripts=forks_cleanly(v.script),
                  on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))
