"""Minifying an export-ladder run (bisect's minify step, and `reprokit minify RUN_DIR`): an export-stage failure
has no graph, so the script's source is reduced while export fails on the same guard or constraint; an
AOTInductor failure's exported program is cut again (export.minify), and where no cut fails the same way (a failure
that needs the script's own calls: a second call, another batch) the script's source is reduced instead."""

from __future__ import annotations

import dataclasses
import os
import time

from reprokit.bisect.session import BisectOptions, Session
from reprokit.data.events import Event
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt, file_hash
from reprokit.data.rundir import RunDir, read_json
from reprokit.data.signature import Signature
from reprokit.errors import ReprokitError
from reprokit.export.findings import traceback_guard
from reprokit.export.ladder import FAILING_STAGES
from reprokit.export.minify import minify_export
from reprokit.source.reduce import minify_source

# Failing stages whose failure is export()'s or run_decompositions()'s own: reduced at source level.
SOURCE_STAGES = ("export", "decompose")


def check_unchanged(run_dir: RunDir, isolation: Isolation) -> None:
    """Bad input when the script is gone or differs from the one bisected: a reduction of another script would
    not be this failure's repro."""
    first = (isolation.decisive_trials or {}).get("first_failing") or ""
    spec = os.path.join(first, "spec.json")
    bisected = read_json(spec).get("script_hash") if first and os.path.exists(spec) else None
    name = os.path.basename(isolation.script)
    if not os.path.exists(isolation.script):
        raise ReprokitError(f"not minified: {name} is gone since the bisect; run reprokit bisect on the script again")
    if bisected and file_hash(isolation.script) != bisected:
        raise ReprokitError(f"not minified: {name} changed since the bisect; run reprokit bisect on it again")


def minify_export_run(run_dir: RunDir, isolation: Isolation, runner, emit, command: str = "") -> Repro:
    """The export run's repro.py: source reduced (export, decompose) or the exported program cut (aoti_*)."""
    stage = isolation.failing_stage
    if stage not in FAILING_STAGES:
        raise ReprokitError(f"{run_dir.path} failed at {stage}, not on the export path")
    check_unchanged(run_dir, isolation)
    if not isolation.warm_cache:  # bad input above is one line, said before the phase's progress line
        emit(Event.PHASE, name="minify")
    if stage in SOURCE_STAGES:
        return minify_export_source(run_dir, isolation, Repro(message=isolation.message), runner, emit, stage=stage)
    started, before = time.monotonic(), runner.executed
    info = run_dir.read_json("run.json")
    recorded = info["options"]
    opts = BisectOptions(**{**recorded, "argv": tuple(recorded.get("argv") or ())})
    s = Session(opts, runner, emit, target=Signature.from_dict(isolation.signature))
    named = command or info.get("command") or f"reprokit bisect {os.path.basename(isolation.script)}"
    cut = minify_export(s, run_dir, isolation, named)
    if cut.verified:
        return cut
    # The cut program, fed synthetic inputs once, did not fail: the failure needs what the script does around
    # AOTInductor (its calls, their inputs). The script itself, run as it is ("user": export and AOTInductor as
    # the script calls them), is then reduced while it fails the same way.
    return minify_export_source(run_dir, isolation, cut, runner, emit, stage="user", started=started, before=before)


def minify_export_source(
    run_dir: RunDir,
    isolation: Isolation,
    prior: Repro,
    runner,
    emit,
    stage: str,
    started: float | None = None,
    before: int | None = None,
) -> Repro:
    """The script reduced while `stage` fails the same way (an export-stage failure: on the same guard or
    constraint); attempts made before (an unverified cut, in `prior`) are kept in its attempts and counts."""
    target = original_guard(isolation) if stage in SOURCE_STAGES else None

    def same_guard(outcome) -> bool:
        return target is None or traceback_guard(outcome.traceback or "") == target

    finding = prior.message
    reduced = minify_source(
        run_dir,
        isolation,
        runner,
        emit,
        time.monotonic() if started is None else started,
        runner.executed if before is None else before,
        stage=stage,
        same=same_guard,
        prior=prior,
    )
    why = (reduced.message or "") if reduced.message != finding else "the reduced script does not fail the same way"
    attempts = (*prior.attempts, ReproAttempt("source", "verified" if reduced.verified else why))
    # why the source was not reduced is said in its attempt; the verdict's finding stays its message
    kind = reduced.kind if reduced.verified else None
    return dataclasses.replace(reduced, attempts=attempts, message=finding, kind=kind)


def original_guard(isolation: Isolation) -> str | None:
    """The guard or constraint export raised on in the bisect's first failing trial (None: it named none)."""
    first = (isolation.decisive_trials or {}).get("first_failing") or ""
    path = os.path.join(first, "result.json")
    return traceback_guard(read_json(path).get("traceback") or "") if first and os.path.exists(path) else None
