"""Minifying an export-ladder run (bisect's minify step, and `reprokit minify RUN_DIR`): an export-stage failure
has no graph, so the script's source is reduced while export fails on the same guard or constraint; an
AOTInductor failure's exported program is cut again (export.minify), and where no cut fails the same way (a failure
that needs the script's own calls: a second call, another batch) the script's source is reduced instead."""

from __future__ import annotations

import os
import time

from reprokit.bisect.session import BisectOptions, Session
from reprokit.data.events import Event
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import file_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir, read_json
from reprokit.data.signature import Signature
from reprokit.errors import ReprokitError
from reprokit.export.ladder import FAILING_STAGES
from reprokit.export.minify import minify_export
from reprokit.export.source_repro import SOURCE_STAGES, minify_export_source


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


def minify_export_run(run_dir: RunDir, isolation: Isolation, facts: RunFacts, runner, emit, command: str = "") -> Repro:
    """The export run's repro.py: source reduced (export, decompose) or the exported program cut (aoti_*), with
    the options the bisect ran with (facts.options: its cwd, for the source passes)."""
    stage = isolation.failing_stage
    if stage not in FAILING_STAGES:
        raise ReprokitError(f"{run_dir.path} failed at {stage}, not on the export path")
    check_unchanged(run_dir, isolation)
    if not isolation.warm_cache:  # bad input above is one line, said before the phase's progress line
        emit(Event.PHASE, name="minify")
    recorded = facts.options
    started, before = time.monotonic(), runner.executed
    prior, source_stage = Repro(message=isolation.message), stage
    if stage not in SOURCE_STAGES:
        opts = BisectOptions(**{**recorded, "argv": tuple(recorded.get("argv") or ())})
        s = Session(opts, runner, emit, target=Signature.from_dict(isolation.signature))
        named = command or facts.command or f"reprokit bisect {os.path.basename(isolation.script)}"
        cut = minify_export(s, run_dir, isolation, named)
        if cut.verified:
            return cut
        # The cut program, fed synthetic inputs once, did not fail: the failure needs what the script does around
        # AOTInductor (its calls, their inputs). The script itself, run as it is ("user": export and AOTInductor
        # as the script calls them), is then reduced while it fails the same way.
        prior, source_stage = cut, "user"
    return minify_export_source(run_dir, isolation, prior, runner, emit, source_stage, facts, (started, before))
