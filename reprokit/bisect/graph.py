"""Which graph: of the graphs Dynamo made, the one that fails the same way alone under the failing stage."""

from __future__ import annotations

import os

from reprokit.bisect.session import Session
from reprokit.data.events import Event
from reprokit.data.records import Outcome


def which_graph(s: Session, stage: str, passing: str, failing: Outcome) -> int | None:
    """The graph that, compiled by `stage` while the others go through `passing`, fails the same way."""
    candidates = list(range(failing.graphs))[::-1]
    if failing.failed_graph is not None:
        candidates.remove(failing.failed_graph)
        candidates.insert(0, failing.failed_graph)
    for k in candidates:
        outcome = s.runner(s.spec(stage, f"graph-{k}", only_graph=k, other_stage=passing))
        if s.fails_same(outcome):
            s.emit(Event.GRAPH, graph=k, count=failing.graphs)
            return k
    return None


def failing_graph(s: Session, stage: str, passing: str, failing: Outcome) -> int | None:
    """The failing graph's index: asked when there are several, 0 when there is one, None for Dynamo itself."""
    if stage == "eager":
        return None
    if failing.graphs > 1:
        return which_graph(s, stage, passing, failing)
    return 0 if failing.graphs == 1 else None


def graph_code(failing: Outcome, graph: int) -> str | None:
    """The readable code of that graph, as the failing trial saved it."""
    code_path = os.path.join(failing.trial_dir, "graphs", f"graph_{graph}.py")
    if not os.path.exists(code_path):
        return None
    with open(code_path) as f:
        return f.read()
