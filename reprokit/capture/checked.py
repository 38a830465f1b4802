"""What `--check-accuracy` found, read back from a capture folder: capture.json's lines of every rank, and the
failure.json of the rank that diverged."""

from __future__ import annotations

import os
from dataclasses import dataclass

from reprokit.capture import files
from reprokit.data.rundir import read_json_dict


@dataclass(frozen=True)
class Checked:
    """The checks of every rank together."""

    calls: int  # each graph's first calls checked
    checked: int  # calls checked, all ranks
    diverged: tuple | None  # (rank, graph, the mismatch) of the first rank that diverged
    more_accurate: tuple  # graphs compiled closer to float64 than eager: not flagged
    random: tuple  # graphs not checked: random ops
    eager_failed: tuple  # graphs not checked: eager raised on the copies


def checked(root: str) -> Checked:
    """The checks the capture at root recorded (nothing checked when no process compiled)."""
    ranks = (read_json_dict(os.path.join(root, files.SUMMARY)) or {}).get("ranks") or {}
    lines = [ranks[r] for r in sorted(ranks, key=lambda r: int(r) if r.isdigit() else 0)]
    diverged = None
    for rank in sorted(ranks, key=lambda r: int(r) if r.isdigit() else 0):
        if ranks[rank].get("diverged") is not None:
            failure = read_json_dict(os.path.join(files.rank_dir(root, rank), files.FAILURE)) or {}
            diverged = (rank, ranks[rank]["diverged"], (failure.get("check") or {}).get("mismatch", ""))
            break

    def union(key, sub=None):
        found = [g for line in lines for g in ((line.get(sub) or {}) if sub else line).get(key) or []]
        return tuple(sorted(set(found)))

    return Checked(
        calls=max((int(line.get("check_calls") or 0) for line in lines), default=0),
        checked=sum(int(line.get("checked_calls") or 0) for line in lines),
        diverged=diverged,
        more_accurate=union("more_accurate"),
        random=union("random", "not_checked"),
        eager_failed=union("eager_failed", "not_checked"),
    )
