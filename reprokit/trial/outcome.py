"""What happened to a finished trial, as an Outcome: its result.json, or how its process ended."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from reprokit.data import signature as sig
from reprokit.data.ranks import merge_ranks, rank_dirs, rank_stacks, torchrun_exits
from reprokit.data.records import Outcome, Signature
from reprokit.data.rundir import read_json

# The note of a trial that hung after every process wrote its result (bisect/steady.py reports it).
EXIT_HANG_NOTE = "hung at exit after writing its result (counted by the result; where it hung: stacks.txt)"
# The note of a trial whose cluster job ended without an answer, twice (trial/slurm.py): never the bug.
SCHEDULER_ENDED = "the scheduler ended the trial's job"


def scheduler_ended(outcome: Outcome) -> bool:
    """A trial the cluster never answered (trial/slurm.py): neither the bug nor a result to keep."""
    return bool(outcome.note and outcome.note.startswith(SCHEDULER_ENDED))


def classify(trial_dir: str, returncode: int, timed_out: bool, seconds: float, torchrun: bool = False) -> Outcome:
    """Outcome of a finished trial from its result.json, or from how the process ended; a trial of several
    ranks answers with its first failing rank (data.ranks.merge_ranks)."""
    data, timed_out = _trial_data(trial_dir, timed_out, torchrun)
    extra: dict[str, Any] = {
        k: data.get(k)
        for k in (
            "graphs",
            "compiled",
            "user_backend",
            "compile_args",
            "bisect_detail",
            "failed_graph",
            "failed_ranks",
            "longest_compile",
        )
        if data.get(k) is not None
    }
    extra["counters"] = data.get("counters") or {}
    note = data.get("note") or ""
    if timed_out:
        signature = sig.HANG
        kind = "hang"
        # Where a rank waits says more than where the process that started the ranks does (mp.spawn's join).
        frame = next(
            filter(None, (_hang_frame(os.path.join(trial_dir, d, "stacks.txt")) for d in [*rank_dirs(trial_dir), ""])),
            None,
        )
        if frame:
            signature = dataclasses.replace(signature, frame=frame)
        note = note or "timed out; every thread's stack is in stacks.txt"
        data["traceback"] = rank_stacks(trial_dir)  # every process's, each rank's included
    elif "kind" in data:
        kind = data["kind"]
        signature = Signature.from_dict(data["signature"])
        note = data.get("note") or note
    elif returncode is not None and returncode < 0:
        kind = "crash"
        signature = sig.for_signal(-returncode)
    elif torchrun and (killed := _killed_rank(trial_dir)) is not None:
        # A rank killed by a signal (a segfault in a kernel) writes nothing, and torchrun exits 1: its report says
        # which rank died first, and by what.
        rank, code, failed = killed
        kind, signature = "crash", sig.for_signal(-code)
        note = "; ".join(x for x in (f"rank {rank} was killed by {signature.exc_type}", note) if x)
        extra["failed_ranks"] = failed
    else:
        kind = "crash"
        signature = Signature("crash", None, f"trial process exited {returncode} without a result", None)
    return Outcome(
        kind=kind,
        signature=signature,
        seconds=round(seconds, 3),
        returncode=returncode,
        trial_dir=trial_dir,
        traceback=data.get("traceback", "") if "kind" in data or timed_out else "",
        note=note,
        **extra,
    )


def _trial_data(trial_dir: str, timed_out: bool, torchrun: bool) -> tuple:
    """(data, timed_out): what the trial wrote (result.json, else state.json; every rank's merged), and whether
    it counts as a hang: one that hung after every process had written its answer passes as that answer."""
    result_path = os.path.join(trial_dir, "result.json")
    state_path = os.path.join(trial_dir, "state.json")
    data: dict = {}
    teardown = timed_out and answered(trial_dir)
    if teardown:
        # It hung after every process had written its answer (gloo's teardown at exit): the answer counts.
        timed_out = False
    if os.path.exists(result_path) and not timed_out:
        data = read_json(result_path)
    elif os.path.exists(state_path):
        data = read_json(state_path)
    if not timed_out:
        data = merge_ranks(trial_dir, data, torchrun)
    if teardown:
        data.setdefault("kind", "pass")  # every rank passed; only the exit hung
        data.setdefault("signature", sig.PASS.to_dict())
        data["note"] = "; ".join(x for x in (data.get("note"), EXIT_HANG_NOTE) if x)
    return data, timed_out


def _killed_rank(trial_dir: str) -> tuple | None:
    """(rank, its negative exit code, every failed rank) when torchrun reports its first failed rank killed by a
    signal; None otherwise."""
    try:
        with open(os.path.join(trial_dir, "stderr.txt"), errors="replace") as f:
            f.seek(max(0, os.path.getsize(f.name) - 50_000))
            report = f.read()
    except OSError:
        return None
    root, exits = torchrun_exits(report)
    if root is None or exits.get(root, 0) >= 0:
        return None
    return root, exits[root], sorted(exits)


def answered(trial_dir: str) -> bool:
    """Every process of the trial wrote its result, before any stack dump at the limit: the trial process, or
    each rank it started."""
    if _answered_in(trial_dir):
        return True
    ranks = rank_dirs(trial_dir)
    return bool(ranks) and all(_answered_in(os.path.join(trial_dir, r)) for r in ranks)


def _answered_in(folder: str) -> bool:
    """result.json is there and older than the limit's stack dump (stacks.txt, empty until then). One written after
    it is the limit's doing: SIGUSR1 goes to the whole group, a compiler the trial runs (g++) dies by it, and the
    compile raises a CppCompileError before the SIGKILL comes (a looping pass's subsystem search, CPU: every trial
    whose g++ ran at the limit answered a compile error). A tie counts as after: timestamps are a clock tick apart."""
    try:
        result = os.stat(os.path.join(folder, "result.json"))
    except OSError:
        return False
    try:
        stacks = os.stat(os.path.join(folder, "stacks.txt"))
    except OSError:
        return True
    return stacks.st_size == 0 or stacks.st_mtime_ns > result.st_mtime_ns


def _hang_frame(stacks_path: str) -> str | None:
    """The innermost frame of the main thread in a faulthandler dump, for the hang's report."""
    try:
        with open(stacks_path) as f:
            text = f.read()
    except OSError:
        return None
    block = None
    for part in text.split("\n\n"):
        if "most recent call first" in part and ("Current thread" in part or block is None):
            block = part
    if not block:
        return None
    for line in block.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            return line
    return None
