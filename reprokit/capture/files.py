"""Where a capture folder keeps what: the names both the recorder (in the job) and the offline bisect read."""

from __future__ import annotations

import os

from reprokit import settings

CAPTURE_VAR = settings.CAPTURE.name  # the folder: set, every python process of the job records into it
MAX_BYTES_VAR = settings.CAPTURE_MAX_INPUT_BYTES.name  # real input values are saved up to this size, per tensor
MAX_GRAPH_BYTES_VAR = settings.CAPTURE_MAX_GRAPH_INPUT_BYTES.name  # and up to this size in all, per graph
ON_DISK_VAR = settings.CAPTURE_INPUTS_ON_DISK.name  # "1": inputs over the caps streamed to disk
COMPILE_TIMEOUT_VAR = settings.CAPTURE_COMPILE_TIMEOUT.name  # seconds one graph's compile may take
FALL_BACK_VAR = settings.CAPTURE_FALL_BACK.name  # "1": a graph past that limit runs eagerly (--fall-back-to-eager)
CHECK_CALLS_VAR = settings.CAPTURE_CHECK_CALLS.name  # --check-accuracy: the first calls of each graph checked
SUMMARY = "capture.json"  # what every capture writes: graphs seen per rank, seconds
FAILURE = "failure.json"  # per failing rank: signature, traceback, rank, torch version, graph index
CASE = "case"  # per failing rank: the failing graph as capture_graph writes it in a trial
EXIT = "exit.json"  # per rank that ended in error with no exception from torch: how, and the graphs of calls/
CALLS = "calls"  # beside it: g0, g1, ...: each graph's latest call (capture/recent_call.py)
ACCURACY = "accuracy.json"  # per diverged rank: the measures of the call that diverged (child/accuracy)
STACKS = "stacks.txt"  # per hung rank: every thread's stack as the signal that ended the job found them
# Written ahead of a crash, and removed when the process exits (capture/crash.py):
GRAPHS = "graphs"  # g0, g1, ...: each graph, light, before it compiles
INFLIGHT = "inflight"  # which graph is compiling or running now
FAULT = "fault.txt"  # faulthandler's report of a fatal signal
PROCESS = "process.json"  # rank, script, torch version, process group
ENDING = "ending.txt"  # every thread's stack as an ending signal (SIGTERM, SIGINT, SIGHUP) arrived (capture/hang.py)


def rank_dir(root: str, rank: str) -> str:
    """The folder of one rank's failure."""
    return os.path.join(root, f"rank{rank}")


def current_rank(group_rank: int | None = None) -> str:
    """This process's rank: the default process group's once it is initialised (group_rank), else as the launcher
    set it (RANK, else LOCAL_RANK), "0" for a one-process job. The group comes first: ranks a job spawns itself
    (torch.multiprocessing.spawn) have neither variable, and would all write as rank 0."""
    if group_rank is not None:
        return str(group_rank)
    rank = settings.RANK.get() or settings.LOCAL_RANK.get() or "0"
    return rank if rank.isdigit() else "0"
