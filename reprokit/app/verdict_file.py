"""verdict.json: the one module that writes it, and the verdict built from the phases' results (Isolation, Repro,
Evidence). Each phase's result is written as it comes, so --resume and `reprokit minify RUN_DIR` find it."""

from __future__ import annotations

import dataclasses

from reprokit.data.phases import Evidence, Isolation, Repro
from reprokit.data.records import Verdict
from reprokit.data.rundir import VERDICT_FILE, RunDir


def write_verdict(run_dir: RunDir, verdict: Verdict | dict) -> None:
    """Write the run's verdict (a bisect's Verdict, or a model run's plain record)."""
    run_dir.write_json(VERDICT_FILE, verdict.to_dict() if isinstance(verdict, Verdict) else verdict)


def isolated(run_dir: RunDir, isolation: Isolation) -> Verdict:
    """The verdict of an isolation, written."""
    verdict = Verdict(**isolation.verdict_fields(), run_dir=run_dir.path)
    write_verdict(run_dir, verdict)
    return verdict


def isolation_of(verdict: Verdict) -> Isolation:
    """The isolation a verdict holds (`reprokit minify RUN_DIR` starts from a finished run's), as verdict.json
    reads back."""
    return Isolation.from_dict(verdict.to_dict())


def with_repro(run_dir: RunDir, verdict: Verdict, repro: Repro) -> Verdict:
    """The verdict with minify's repro, written."""
    verdict = dataclasses.replace(verdict, **repro.verdict_fields())
    write_verdict(run_dir, verdict)
    return verdict


def with_evidence(run_dir: RunDir, verdict: Verdict, evidence: Evidence) -> Verdict:
    """The verdict with what was asked after the repro, written."""
    verdict = dataclasses.replace(verdict, **evidence.verdict_fields(verdict))
    write_verdict(run_dir, verdict)
    return verdict


def with_fields(run_dir: RunDir, verdict: Verdict, **fields) -> Verdict:
    """The verdict with a later step's own fields (message, tarball, versions), written."""
    verdict = dataclasses.replace(verdict, **fields)
    write_verdict(run_dir, verdict)
    return verdict
