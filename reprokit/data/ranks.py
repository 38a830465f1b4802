"""A trial of several ranks (torchrun's, or those the script spawned itself) answered as one: what its ranks
wrote into TRIAL_DIR/rank<i>/ merged with what the trial process wrote into TRIAL_DIR."""

from __future__ import annotations

import json
import os
import re
import socket

# Result kinds of a rank that failed (pass, skip and invalid are not failures of the trial).
_FAILED = ("exception", "exit", "crash", "cuda_fault", "accuracy", "hang")


def free_port() -> int:
    """A TCP port free on this machine now: a trial's own rendezvous port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_records(trial_dir: str) -> dict[int, dict]:
    """rank -> its result.json (else its state.json, as far as it got), for the rank<i>/ folders of a trial."""
    out: dict[int, dict] = {}
    try:
        names = os.listdir(trial_dir)
    except OSError:
        return out
    for name in names:
        m = re.fullmatch(r"rank(\d+)", name)
        if not m:
            continue
        for file in ("result.json", "state.json"):
            path = os.path.join(trial_dir, name, file)
            if os.path.exists(path):
                try:
                    with open(path) as f:
                        out[int(m.group(1))] = json.load(f)
                    break
                except ValueError:
                    continue
    return out


# What a collective raises in a rank when another rank's process died: gloo's and NCCL's words for it.
_PEER_LOST = re.compile(
    r"Connection closed by peer|Connection reset by peer|remote process exited|"
    r"NCCL communicator was aborted|Broken pipe",
    re.IGNORECASE,
)


def lost_a_peer(record: dict) -> bool:
    """Whether a rank's failure is a collective noticing that another rank died."""
    sig = record.get("signature") or {}
    return bool(_PEER_LOST.search(f"{sig.get('message') or ''} {sig.get('cause') or ''}"))


def merge_ranks(trial_dir: str, data: dict, torchrun: bool) -> dict:
    """The trial's record with its ranks': the lowest failing rank's failure (of those that did not merely lose a
    peer) stands for the trial (its signature, traceback, counters, failing graph), failed_ranks lists all that
    failed; compiled when any rank compiled. Under torchrun the trial folder is rank 0's own."""
    ranks = rank_records(trial_dir)
    if torchrun and data:
        ranks[0] = data
    if not ranks:
        return data
    failed = sorted(r for r, d in ranks.items() if d.get("kind") in _FAILED)
    # A rank that died because a peer did (gloo's "Connection closed by peer") is not the failure: the peer is.
    first_hand = [r for r in failed if not lost_a_peer(ranks[r])]
    chosen: int | None = (first_hand or failed)[0] if failed else None
    out = dict(ranks[chosen]) if chosen is not None else dict(data or ranks[min(ranks)])
    if chosen is None and not data.get("kind"):
        out.pop("kind", None)  # every rank passed but the trial process left no result: how it ended decides
    out["compiled"] = any(d.get("compiled") for d in [data, *ranks.values()])
    out["graphs"] = max([d.get("graphs") or 0 for d in [data, *ranks.values()]])
    out["failed_ranks"] = failed
    if failed and chosen is not None:
        said = f"rank {chosen} failed" + (f" (ranks {', '.join(map(str, failed))} failed)" if len(failed) > 1 else "")
        out["note"] = "; ".join(x for x in (said, out.get("note")) if x)
        _link_case(trial_dir, chosen)
    return out


# torchrun's report of a failed rank (torch.distributed.elastic's ChildFailedError): "rank : 0 (local_rank: 0)", then
# "exitcode : -11 (pid: 8588)"; the first under "Root Cause (first observed failure):" died first.
_RANK_EXIT = re.compile(r"rank\s*:\s*(\d+)\s*\(local_rank:[^)]*\)\s*\n\s*exitcode\s*:\s*(-?\d+)")
_ROOT_CAUSE = "Root Cause (first observed failure):"


def torchrun_exits(report: str) -> tuple[int | None, dict]:
    """(the rank torchrun names the root cause, {rank: exit code} of every rank it reports failed) from the
    launcher's output; a negative code is the signal that killed the rank, which left no result of its own."""
    exits = {int(r): int(c) for r, c in _RANK_EXIT.findall(report)}
    root = _RANK_EXIT.search(report, report.rfind(_ROOT_CAUSE)) if _ROOT_CAUSE in report else None
    return (int(root.group(1)) if root else min(exits) if exits else None), exits


def rank_stacks(trial_dir: str, limit: int = 200_000) -> str:
    """Every stack dump of a trial: the trial process's stacks.txt, then each rank's (rank<i>/stacks.txt), each
    headed "== rank<i> ==" when there are ranks. A hung job shows where each rank waits: a desync is ranks in
    different collectives."""
    parts, ranks = [], rank_dirs(trial_dir)
    for name in ["", *ranks]:
        try:
            with open(os.path.join(trial_dir, name, "stacks.txt"), errors="replace") as f:
                text = f.read()[-limit:].strip()
        except OSError:
            continue
        if text:
            parts.append(f"== {name or 'trial process'} ==\n{text}" if ranks else text)
    return "\n\n".join(parts)


def rank_dirs(trial_dir: str) -> list:
    """The rank<i> folders of a trial, lowest rank first."""
    try:
        return sorted((n for n in os.listdir(trial_dir) if re.fullmatch(r"rank\d+", n)), key=lambda n: int(n[4:]))
    except OSError:
        return []


def _link_case(trial_dir: str, rank: int) -> None:
    """A graph the failing rank captured is found where a one-process trial leaves it: TRIAL_DIR/case."""
    case = os.path.join(trial_dir, f"rank{rank}", "case")
    link = os.path.join(trial_dir, "case")
    if os.path.isdir(case) and not os.path.exists(link):
        os.symlink(case, link)


def needs_launcher(text: str) -> bool:
    """Whether a trial's failure says the script initialises torch.distributed from the environment and no
    launcher set it (torchrun's RANK, WORLD_SIZE, MASTER_ADDR)."""
    return "env://" in text and ("expected, but not set" in text or "environment variable" in text)
