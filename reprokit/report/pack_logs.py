"""logs/ of a pack: the decisive trials' output, their TORCH_TRACE logs and tlparse's report of the first."""

from __future__ import annotations

import os
import shutil
import subprocess

from reprokit.data.trial_files import read_tail

# tlparse's copies of the whole trace log: the pack holds the log itself already.
TLPARSE_SKIP = ("raw.log", "raw.jsonl")
TLPARSE_MEMBER_LIMIT = 1_000_000


def trial_logs(trial: str, prefix: str, names: tuple) -> dict:
    """{prefix/name: text} for each of a trial folder's files that exists and is not empty."""
    texts = {}
    for fname in names:
        text = read_tail(os.path.join(trial, fname))
        if text:
            texts[f"{prefix}/{fname}"] = text
    return texts


def decisive_logs(decisive_trials: dict | None, error: dict | None = None) -> tuple:
    """(logs/ texts, where tlparse's report is): the decisive trials' output, the minimal repro's re-run, TORCH_LOGS
    output and the TORCH_TRACE log of the failing stage with tlparse's report of it."""
    texts: dict = {}
    packed: set = set()
    tlparse_at = None
    roles = sorted((decisive_trials or {}).items())
    if error and error.get("role") == "repro":
        roles.insert(0, ("repro", error["trial"]))
    for role, trial in roles:
        if trial in packed:
            continue  # one trial in two roles (the original carries torch's logs): packed once, first role
        packed.add(trial)
        texts.update(trial_logs(trial, f"logs/{role}", ("stdout.txt", "stderr.txt", "stacks.txt", "spec.json")))
        trace_dir = os.path.join(trial, "trace")
        if os.path.isdir(trace_dir):
            texts.update(trial_logs(trace_dir, f"logs/{role}/trace", tuple(sorted(os.listdir(trace_dir)))))
            report = tlparse_dir(trace_dir)
            if report and tlparse_at is None:
                tlparse_at = f"logs/{role}/tlparse"
                texts.update(tlparse_texts(report, tlparse_at))
    return texts, tlparse_at


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
