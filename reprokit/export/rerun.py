"""Minifying an export-ladder run (bisect's minify step, and `reprokit minify RUN_DIR`): an export-stage failure
has no graph, so the script's source is reduced while export fails on the same guard or constraint; an
AOTInductor failure's exported program is cut again (export.minify), and where no cut fails the same way (a failure
that needs the script's own calls: a second call, another batch) the script's source is reduced instead."""

from __future__ import annotations

import os
import time

from reprokit.bisect.session import BisectOptions, Session
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt, Signature, Verdict, file_hash
from reprokit.data.rundir import RunDir, read_json
from reprokit.errors import ReprokitError
from reprokit.export.findings import traceback_guard
from reprokit.export.ladder import FAILING_STAGES
from reprokit.export.minify import minify_export
from reprokit.source.reduce import minify_source

# Failing stages whose failure is export()'s or run_decompositions()'s own: reduced at source level.
SOURCE_STAGES = ("export", "decompose")


def check_unchanged(run_dir: RunDir, v: Verdict) -> None:
    """Bad input when the script is gone or differs from the one bisected: a reduction of another script would
    not be this failure's repro."""
    first = (v.decisive_trials or {}).get("first_failing") or ""
    spec = os.path.join(first, "spec.json")
    bisected = read_json(spec).get("script_hash") if first and os.path.exists(spec) else None
    name = os.path.basename(v.script)
    if not os.path.exists(v.script):
        raise ReprokitError(f"not minified: {name} is gone since the bisect; run reprokit bisect on the script again")
    if bisected and file_hash(v.script) != bisected:
        raise ReprokitError(f"not minified: {name} changed since the bisect; run reprokit bisect on it again")


def minify_export_run(run_dir: RunDir, isolation: Isolation, runner, emit, command: str = "") -> Repro:
    """The export run's repro.py: source reduced (export, decompose) or the exported program cut (aoti_*)."""
    return Repro.of(_minify_export(run_dir, isolation.draft(), runner, emit, command))


def _minify_export(run_dir: RunDir, v: Verdict, runner, emit, command: str) -> Verdict:
    """minify_export_run on minify's working verdict, which it returns filled in."""
    if v.failing_stage not in FAILING_STAGES:
        raise ReprokitError(f"{run_dir.path} failed at {v.failing_stage}, not on the export path")
    check_unchanged(run_dir, v)
    if v.failing_stage in SOURCE_STAGES:
        return minify_export_source(run_dir, v, runner, emit, stage=v.failing_stage)
    started, before = time.monotonic(), runner.executed
    info = run_dir.read_json("run.json")
    recorded = info["options"]
    opts = BisectOptions(**{**recorded, "argv": tuple(recorded.get("argv") or ())})
    s = Session(opts, runner, emit, target=Signature.from_dict(v.signature))
    v = minify_export(s, run_dir, v, command or info.get("command") or f"reprokit bisect {os.path.basename(v.script)}")
    if v.repro_verified:
        return v
    # The cut program, fed synthetic inputs once, did not fail: the failure needs what the script does around
    # AOTInductor (its calls, their inputs). The script itself, run as it is ("user": export and AOTInductor as
    # the script calls them), is then reduced while it fails the same way.
    return minify_export_source(run_dir, v, runner, emit, stage="user", started=started, before=before)


def minify_export_source(
    run_dir: RunDir, v: Verdict, runner, emit, stage: str, started: float | None = None, before: int | None = None
) -> Verdict:
    """The script reduced while `stage` fails the same way (an export-stage failure: on the same guard or
    constraint); attempts made before (an unverified cut) are kept in repro_attempts and in the minify counts."""
    target = original_guard(v) if stage in SOURCE_STAGES else None

    def same_guard(outcome) -> bool:
        return target is None or traceback_guard(outcome.traceback or "") == target

    finding, earlier = v.message, list(v.repro_attempts or [])
    v = minify_source(
        run_dir,
        v,
        runner,
        emit,
        time.monotonic() if started is None else started,
        runner.executed if before is None else before,
        stage=stage,
        same=same_guard,
    )
    why = v.message if v.message != finding else "the reduced script does not fail the same way"
    v.repro_attempts = earlier + [ReproAttempt("source", "verified" if v.repro_verified else why)]
    v.message = finding  # why the source was not reduced is said in repro_attempts; the verdict's finding stays
    if not v.repro_verified:
        v.repro_kind = None
    return v


def original_guard(v: Verdict) -> str | None:
    """The guard or constraint export raised on in the bisect's first failing trial (None: it named none)."""
    first = (v.decisive_trials or {}).get("first_failing") or ""
    path = os.path.join(first, "result.json")
    return traceback_guard(read_json(path).get("traceback") or "") if first and os.path.exists(path) else None
