"""`reprokit plan RUN_DIR --nodes K`: how long the run would have taken with K nodes, from its journal's measured
trial times and rounds, and the node-hours it spent."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from reprokit.data.rundir import RunDir


def rounds_of(run_dir: RunDir) -> list:
    """Each round's trial seconds, in the order the rounds ran. A journal written before rounds were recorded gives
    one trial a round (it says how the run could go, never better than it can)."""
    rounds: dict = {}
    for i, entry in enumerate(run_dir.journal()):
        rid = entry.get("round", f"alone-{i}")
        rounds.setdefault(rid, []).append(float((entry.get("outcome") or {}).get("seconds") or 0.0))
    return list(rounds.values())


def makespan(seconds: Sequence[float], slots: int) -> float:
    """Longest-first onto `slots` slots: when the last one finishes."""
    loads = [0.0] * max(1, slots)
    for s in sorted(seconds, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + s)
    return max(loads)


def plan_run(run_dir: str, nodes: Sequence[int]) -> dict:
    """Per K in nodes: the run's seconds with each round's trials packed onto K nodes; and the node-hours spent."""
    folder = RunDir.open(run_dir)
    rounds = rounds_of(folder)
    info = folder.read_json("run.json") if folder.exists("run.json") else {}
    per_trial = int(((info.get("executor") or {}).get("nodes_per_trial")) or 1)
    spent = sum(sum(r) for r in rounds) * per_trial / 3600.0
    return {
        "run_dir": folder.path,
        "trials": sum(len(r) for r in rounds),
        "rounds": len(rounds),
        "nodes_per_trial": per_trial,
        "node_hours": round(spent, 4),
        "plans": [
            {"nodes": k, "seconds": round(sum(makespan(r, max(1, k // per_trial)) for r in rounds), 1)} for k in nodes
        ],
    }
