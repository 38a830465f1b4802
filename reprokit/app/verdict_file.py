"""verdict.json: the one module that writes it, and the one that builds and replaces the frozen `Verdict`, from the
phases' results (Isolation, Repro, Evidence) and what the app adds after them (RunInfo). A bisect writes its
isolation as it comes (`reprokit minify RUN_DIR` finds it) and the verdict built once from every phase's result;
the pack and `versions` add theirs (with_run), `reprokit minify RUN_DIR` its repro (with_repro)."""

from __future__ import annotations

import dataclasses

from reprokit.data.phases import Evidence, Isolation, Repro
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.verdict import RunInfo, Verdict


def write_verdict(run_dir: RunDir, verdict: Verdict | dict) -> None:
    """Write the run's verdict (a bisect's Verdict, or a model run's plain record)."""
    run_dir.write_json(VERDICT_FILE, verdict.to_dict() if isinstance(verdict, Verdict) else verdict)


def isolated(run_dir: RunDir, isolation: Isolation) -> Verdict:
    """The verdict of an isolation, written."""
    verdict = Verdict(isolation=isolation, run=RunInfo(run_dir=run_dir.path))
    write_verdict(run_dir, verdict)
    return verdict


def finished(
    run_dir: RunDir, isolation: Isolation, repro: Repro | None = None, evidence: Evidence | None = None, **run
) -> Verdict:
    """The run's verdict, built once from the phases' results and what the app adds after them (RunInfo's fields),
    written."""
    verdict = Verdict(isolation, repro or Repro(), evidence or Evidence(), RunInfo(run_dir=run_dir.path, **run))
    write_verdict(run_dir, verdict)
    return verdict


def isolation_of(verdict: Verdict) -> Isolation:
    """The isolation a verdict holds with the later phases' final values (`reprokit minify RUN_DIR` starts from a
    finished run's), as verdict.json reads back."""
    return dataclasses.replace(verdict.isolation, **verdict.final_values())


def with_repro(run_dir: RunDir, verdict: Verdict, repro: Repro) -> Verdict:
    """The verdict with minify's repro, written."""
    verdict = dataclasses.replace(verdict, repro=repro)
    write_verdict(run_dir, verdict)
    return verdict


def with_run(run_dir: RunDir, verdict: Verdict, **fields) -> Verdict:
    """The verdict with what the app adds after the phases (exit_code, tarball, versions, budget, more_accurate),
    written."""
    verdict = dataclasses.replace(verdict, run=dataclasses.replace(verdict.run, **fields))
    write_verdict(run_dir, verdict)
    return verdict
