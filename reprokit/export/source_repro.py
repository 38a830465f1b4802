"""An export-path failure's script reduced at source level while it fails the same way: an export-stage failure
(export, decompose) on the same guard or constraint export raised in the bisect's first failing trial; an
AOTInductor failure whose cut program did not fail, as the script itself runs it ("user")."""

from __future__ import annotations

import dataclasses
import os

from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir, read_json
from reprokit.export.findings import traceback_guard
from reprokit.source.reduce import minify_source

# Failing stages whose failure is export()'s or run_decompositions()'s own: reduced at source level.
SOURCE_STAGES = ("export", "decompose")


def minify_export_source(
    run_dir: RunDir,
    isolation: Isolation,
    prior: Repro,
    runner,
    emit,
    stage: str,
    facts: RunFacts,
    at: tuple[float, int],
) -> Repro:
    """The script reduced while `stage` fails the same way (an export-stage failure: on the same guard or
    constraint); attempts made before (an unverified cut, in `prior`) are kept in its attempts and counts. at: the
    clock and the runner's count of trials run when the minify started."""
    target = original_guard(isolation) if stage in SOURCE_STAGES else None

    def same_guard(outcome) -> bool:
        return target is None or traceback_guard(outcome.traceback or "") == target

    finding = prior.message
    reduced = minify_source(
        run_dir, isolation, runner, emit, *at, stage=stage, same=same_guard, prior=prior, facts=facts
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
