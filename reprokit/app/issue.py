"""`reprokit issue RUN_DIR`: the GitHub issue text of a run, as its pack holds it."""

from __future__ import annotations

from reprokit.app.pack import pack_plan
from reprokit.data.rundir import RunDir
from reprokit.errors import NothingToIsolate


def issue_markdown(run_dir: str) -> str:
    """ISSUE.md of the run's pack; NothingToIsolate when every doctor finding is the script's own to fix."""
    members = pack_plan(RunDir.open(run_dir)).members()
    if "ISSUE.md" not in members:
        raise NothingToIsolate(
            "every finding in this run is the script's to fix (see DOCTOR.md), none is a "
            "torch.compile limitation: no issue to write"
        )
    return members["ISSUE.md"].decode()


def upstream_warning(run_dir: str) -> str:
    """A warning when `reprokit versions` found the failure fixed in a newer torch, else ""."""
    folder = RunDir.open(run_dir)
    fixed = ((folder.verdict() or {}).get("versions") or {}).get("fixed_in")
    if not fixed:
        return ""
    return (
        f"warning: this failure is fixed in torch {fixed} (reprokit versions): upgrade; an upstream report "
        "is probably not needed"
    )
