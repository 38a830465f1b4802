"""A capture folder read back for an offline bisect: the first failing rank's case and failure, or one line
saying why it cannot be bisected and what to run instead."""

from __future__ import annotations

import os
from dataclasses import dataclass

from reprokit.capture import files
from reprokit.capture.crash import ahead_folders, crashed, killed
from reprokit.data.rundir import read_json_dict
from reprokit.errors import NothingToIsolate, ReprokitError

CASE_FILES = ("meta.json", "graph.pt", "graph.py")  # what every case folder holds (inputs.pt is optional)


@dataclass(frozen=True)
class CapturedFailure:
    """One rank's failing graph as the job left it."""

    root: str
    rank: str
    case: str  # the case folder, as capture_graph wrote it
    failure: dict  # failure.json
    summary: dict  # capture.json

    @property
    def script(self) -> str:
        return self.failure.get("script") or os.path.join(self.root, "script.py")

    @property
    def on_cuda(self) -> bool:
        """Whether the failing graph's inputs lived on a GPU (then the failure may be the device's)."""
        meta = read_json_dict(os.path.join(self.case, "meta.json")) or {}
        return any(str(m.get("device", "")).startswith("cuda") for m in meta.get("inputs") or [])


def read_capture(root: str, torch_version: str) -> CapturedFailure:
    """The first failing rank of the capture at root; ReprokitError (exit 2) or NothingToIsolate (exit 3) with
    one line otherwise."""
    again = f"capture the job again: reprokit capture --output-dir {root} -- CMD"
    ranks = failing_ranks(root)
    summary = read_json_dict(os.path.join(root, files.SUMMARY))
    crashes = crashed_ranks(root)
    if ranks and crashes and min(c["at"] for c in crashes.values()) >= _raised_at(root, ranks):
        crashes = {}  # the first failure is the one to bisect: a rank that crashed first takes down the others
    if not ranks and not crashes:
        crashes = killed_ranks(root)  # kill -9 in a graph: the marker written ahead names it
    if summary is None and not ranks and not crashes:
        raise ReprokitError(
            f"{root} holds no capture (no {files.SUMMARY}); capture the job first: reprokit capture "
            f"--output-dir {root} -- CMD"
        )
    if not ranks and not crashes:
        _nothing_failed(summary or {})
    failure: dict | None
    if crashes:
        rank = min(crashes, key=lambda r: crashes[r]["at"])
        failure = {k: v for k, v in crashes[rank].items() if k not in ("case", "at")}
        case = crashes[rank]["case"]
    else:
        rank = ranks[0]
        failure = read_json_dict(os.path.join(files.rank_dir(root, rank), files.FAILURE))
        case = os.path.join(files.rank_dir(root, rank), files.CASE)
    if failure is None or "signature" not in failure:
        raise ReprokitError(f"{root} is truncated (rank{rank}/{files.FAILURE} is unreadable); {again}")
    recorded = failure.get("torch_version") or (summary or {}).get("torch_version")
    if recorded != torch_version:
        raise ReprokitError(
            f"{root} was captured with torch {recorded}, this is torch {torch_version}: bisect it "
            f"where torch {recorded} is installed, or capture the job again here"
        )
    script = os.path.basename(failure.get("script") or "script.py")
    if failure.get("graph") is None:
        raise NothingToIsolate(f"the failure is at the Dynamo stage, before any graph: run `reprokit bisect {script}`")
    missing = [n for n in CASE_FILES if not os.path.isfile(os.path.join(case, n))]
    if missing or read_json_dict(os.path.join(case, "meta.json")) is None:
        where = os.path.relpath(os.path.join(case, (missing or ["meta.json"])[0]), root)
        raise ReprokitError(f"{root} is truncated ({where} is missing or unreadable); {again}")
    return CapturedFailure(root, rank, case, failure, summary or {})


def _nothing_failed(summary: dict) -> None:
    """NothingToIsolate: the job passed, or was ended before any graph compiled (a kill -9 of reprokit itself
    leaves the job's end unwritten)."""
    seen = sum(int(r.get("graphs") or 0) for r in (summary.get("ranks") or {}).values())
    job = summary.get("job")
    ended = (job or {}).get("ended", {}) if job is not None else {}
    if job is not None and (ended is None or ended.get("signal")) and seen == 0:
        how = ended.get("signal") if ended else "a kill that left no record (kill -9?)"
        raise NothingToIsolate(
            f"the captured job was ended by {how} before any graph compiled: there is nothing compiled to blame; "
            "capture it again and end it once it compiles (its hang, or its failure, comes after)"
        )
    lines = (summary.get("ranks") or {}).values()
    if any(r.get("check_calls") for r in lines):  # capture --check-accuracy: compiled agreed with eager too
        calls = sum(int(r.get("checked_calls") or 0) for r in lines)
        raise NothingToIsolate(
            f"the captured job did not fail, and no graph diverged from eager in {calls} checked "
            f"call{'' if calls == 1 else 's'} ({seen} graph{'' if seen == 1 else 's'} compiled): nothing to bisect"
        )
    raise NothingToIsolate(f"the captured job did not fail ({seen} graphs compiled): nothing to bisect")


def killed_ranks(root: str) -> dict:
    """{rank: failure record} of the ranks whose process was killed with no report (kill -9) while a graph
    written ahead compiled or ran (capture/crash.killed), lowest rank first; of several, the first killed."""
    return _first_per_rank(root, killed)


def crashed_ranks(root: str) -> dict:
    """{rank: failure record} of the ranks whose process died by a fatal signal in a compiled graph
    (capture/crash.py), lowest rank first; of several processes of one rank, the first to crash."""
    return _first_per_rank(root, crashed)


def _first_per_rank(root: str, read) -> dict:
    """{rank: the earliest record `read` finds in that rank's written-ahead folders}, lowest rank first."""
    found: dict = {}
    for rank in _rank_names(root):
        records = [r for r in (read(a) for a in ahead_folders(files.rank_dir(root, rank))) if r is not None]
        if records:
            found[rank] = min(records, key=lambda r: r["at"])
    return found


def _raised_at(root: str, ranks: list) -> float:
    """When the first of these ranks wrote its failure.json."""
    return min(os.path.getmtime(os.path.join(files.rank_dir(root, r), files.FAILURE)) for r in ranks)


def failing_ranks(root: str) -> list:
    """Ranks with a failure.json, lowest first."""
    return [r for r in _rank_names(root) if os.path.exists(os.path.join(files.rank_dir(root, r), files.FAILURE))]


def exited_ranks(root: str) -> list:
    """Ranks that ended in error with no failure of a compiled graph, their graphs' latest calls written (exit.json),
    lowest first."""
    return [r for r in _rank_names(root) if os.path.exists(os.path.join(files.rank_dir(root, r), files.EXIT))]


def _rank_names(root: str) -> list:
    """The ranks the capture has a folder for (rank<i>), lowest first."""
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return sorted((n[len("rank") :] for n in names if n.startswith("rank") and n[len("rank") :].isdigit()), key=int)
