"""Parts of a bisect run's ISSUE.md besides the verdict's own words: the decisive error (from the minimal repro's
re-run when there is one), tlparse's report of the failing trial's trace, and GitHub's size limit."""

from __future__ import annotations

import os
import shutil
import subprocess

from reprokit.data.kinds import OutcomeKind
from reprokit.data.ranks import rank_stacks
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.signature import Signature
from reprokit.data.trial_files import trial_record
from reprokit.data.verdict import Verdict
from reprokit.report.decisive import decisive_error
from reprokit.report.pack import read_tail

GITHUB_LIMIT = 65_536  # characters of an issue body
# tlparse's copies of the whole trace log: the pack holds the log itself already.
TLPARSE_SKIP = ("raw.log", "raw.jsonl")
TLPARSE_MEMBER_LIMIT = 1_000_000


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


def tlparse_dir(trace_dir: str) -> str | None:
    """tlparse's report of a TORCH_TRACE folder (made once, beside it), or None when tlparse is absent or fails."""
    out = os.path.join(os.path.dirname(trace_dir.rstrip("/")), "tlparse")
    if os.path.exists(os.path.join(out, "index.html")):
        return out
    exe = shutil.which("tlparse")
    logs = [f for f in sorted(os.listdir(trace_dir)) if f.endswith(".log")] if os.path.isdir(trace_dir) else []
    if not exe or not logs:
        return None
    try:
        p = subprocess.run(
            [exe, os.path.join(trace_dir, logs[0]), "-o", out, "--overwrite", "--no-browser"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out if p.returncode == 0 and os.path.exists(os.path.join(out, "index.html")) else None


def tlparse_texts(out: str, prefix: str) -> dict:
    """{prefix/relative path: text} of tlparse's report: its HTML and the artifacts the HTML links to."""
    texts = {}
    for root, _dirs, files in sorted(os.walk(out)):
        for name in sorted(files):
            path = os.path.join(root, name)
            if name in TLPARSE_SKIP or os.path.getsize(path) > TLPARSE_MEMBER_LIMIT:
                continue
            rel = os.path.relpath(path, out).replace(os.sep, "/")
            texts[f"{prefix}/{rel}"] = read_tail(path) or ""
    return texts


def fit_github(text: str, folded: list) -> str:
    """The issue body within GitHub's limit: each of `folded` (long parts, least needed first) replaced by a
    pointer to the attached tarball until it fits."""
    for part, pointer in folded:
        if len(text) <= GITHUB_LIMIT:
            break
        if part and part in text:
            text = text.replace(part, pointer)
    if len(text) > GITHUB_LIMIT:
        text = (
            text[: GITHUB_LIMIT - 200] + "\n\n[... cut to GitHub's limit; the whole text is in the attached tarball]\n"
        )
    return text
