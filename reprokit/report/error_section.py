"""The decisive error of a bisect run, as ISSUE.md quotes it and logs/ names its trial: the minimal repro's re-run
when there is one, else the bisect's first failing trial."""

from __future__ import annotations

import os

from reprokit.data.kinds import OutcomeKind
from reprokit.data.ranks import rank_stacks
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.signature import Signature
from reprokit.data.trial_files import read_tail, trial_record
from reprokit.data.verdict import Verdict
from reprokit.report.decisive import decisive_error


def repro_trial(run: RunDir) -> str | None:
    """The folder of the fresh-interpreter run of repro.py that verified it (the last one journaled)."""
    found = None
    for entry in run.journal():
        outcome = entry.get("outcome") or {}
        if entry.get("label") == "verify-repro-0" and outcome.get("kind") not in (None, "pass"):
            found = outcome.get("trial_dir") or found
    if found and os.path.isdir(found):
        return found
    # An accuracy repro is verified by its run alone, no trial (minify/alone.py): that run's record.
    alone = run.file("repro_run")
    kind = trial_record(alone).get("kind")
    return alone if kind not in (None, "pass") else None


def trial_error(trial: str, kind: str, signature: dict | None) -> str:
    """The decisive error of one trial folder: its stderr (the whole chain), else result.json's traceback."""
    result = trial_record(trial)
    text = read_tail(os.path.join(trial, "stderr.txt"), 4_000_000) or ""
    if "Traceback (most recent call last)" not in text and result.get("traceback"):
        text = result["traceback"]
    stacks = rank_stacks(trial)  # every rank's too
    sig = Signature.from_dict(signature) if signature else None
    return decisive_error(
        kind,
        text,
        note=result.get("note") or "",
        stacks=stacks,
        signal=sig.exc_type if sig and sig.kind == OutcomeKind.CRASH else None,
    )


def error_section(run: RunDir, v: Verdict) -> dict:
    """{"text", "source", "full_log", "trial", "role"}: the decisive error and where it came from. The minimal
    repro's own failure comes first (verified the same as the original's); else the bisect's first failing trial."""
    repro = repro_trial(run) if v.repro.verified else None
    if repro:
        out = trial_record(repro)
        return {
            "text": trial_error(repro, out.get("kind") or v.isolation.kind or "exception", out.get("signature")),
            "source": "The minimal repro's failure, re-run in a fresh interpreter:",
            "full_log": "logs/repro/stderr.txt",
            "trial": repro,
            "role": "repro",
        }
    trial = (v.decisive_trials or {}).get("first_failing")
    if not trial:
        return {
            "text": "(no failing trial recorded)",
            "source": "",
            "full_log": VERDICT_FILE,
            "trial": None,
            "role": None,
        }
    return {
        "text": trial_error(trial, v.isolation.kind or "exception", v.isolation.signature),
        "source": "The original script's failure under the failing stage:",
        "full_log": "logs/first_failing/stderr.txt",
        "trial": trial,
        "role": "first_failing",
    }
