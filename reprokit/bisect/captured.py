"""The original run's failing graph, saved as it raised (TrialSpec.capture_failing): the stage ladder is asked of
that graph alone, and when it fails there the same way it names the failing stage and graph at once; every later
question of that stage (the subsystem and lowering search, its re-run, the config flips, torch's logs) and minify
are then graph trials on it, seconds each, instead of runs of the whole script. When the graph alone does not
fail the same way, the script answers, as it always did."""

from __future__ import annotations

import os

from reprokit.bisect.ladder import custom_ops, dynamo_hang
from reprokit.bisect.session import Session
from reprokit.capture import crash
from reprokit.data.records import Outcome, StageResult, TrialSpec, Verdict

# The ladder on a graph: Dynamo's graph as it is, then each layer below it (the run without compile and the
# crossref check need the script).
GRAPH_STAGES = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")

FAILING_CASE = "failing_case"  # as child/router.py names it


def saved_case(original: Outcome) -> tuple[str | None, int | None]:
    """(case folder, graph index) the original run saved of its failing graph (the lowest rank's, under
    torchrun): as it raised, or, when a signal killed it, the graph it was compiling or running, written ahead
    (capture/crash.py); (None, None) when it saved none."""
    ranks = (
        sorted(d for d in os.listdir(original.trial_dir) if d.startswith("rank"))
        if os.path.isdir(original.trial_dir)
        else []
    )
    for folder in ["", *ranks]:
        case = os.path.join(original.trial_dir, folder, FAILING_CASE)
        if original.failed_graph is not None and os.path.exists(os.path.join(case, "meta.json")):
            return case, original.failed_graph
    if original.kind != "crash" or original.signature.exc_type not in crash.FATAL_SIGNALS:
        return None, None  # killed from outside (SIGKILL, SIGTERM, a timeout): no graph's doing
    for folder in ["", *ranks]:
        for ahead in crash.ahead_folders(os.path.join(original.trial_dir, folder)):
            k = crash.marked(ahead)[1]
            ahead_case = crash.graph_case(ahead, k)
            if ahead_case is not None:
                return ahead_case, k
    return None, None


def adopt_saved_graph(s: Session, v: Verdict, original: Outcome, stage: str) -> Outcome | None:
    """The saved graph run alone under `stage`; when it fails the same way it stands for the script from now on
    (s.graph_case, v.graph, v.graph_case) and its outcome is returned (its counters are the graph's own)."""
    case, k = saved_case(original)
    if case is None or stage not in GRAPH_STAGES[1:] or s.opts.kind != "failure":
        return None
    alone = s.runner(TrialSpec(mode="graph", stage=stage, case=case, label="graph-alone"))
    if not s.fails_same(alone):
        s.emit(
            "note",
            text=f"graph {k} as the original run saved it does not fail alone the "
            f"same way ({alone.signature.short()[:120]}): the script answers instead",
        )
        return None
    s.graph_case, s.graph_stage = case, stage
    v.graph, v.graph_case = k, case
    s.emit("graph", graph=k, count=original.graphs)
    return alone


def graph_ladder(s: Session, v: Verdict, original: Outcome) -> list | None:
    """The ladder asked of the saved graph, every stage at once; None (nothing asked or nothing kept) when there is
    no saved graph, or it does not fail alone the same way under any stage, or the script's custom ops call for
    the crossref stage."""
    case, k = saved_case(original)
    if (
        case is None
        or s.opts.kind != "failure"
        or dynamo_hang(original)
        or original.user_backend != "inductor"
        or custom_ops(s, original)
    ):
        return None
    outcomes = s.runner.map(
        [TrialSpec(mode="graph", stage=st, case=case, label=f"graph-stage-{st}") for st in GRAPH_STAGES]
    )
    first = next(
        (i for i, x in enumerate(outcomes) if x is not None and s.target is not None and s.target.matches(x.signature)),
        None,
    )
    if first is None:
        s.emit(
            "note",
            text=f"graph {k}, saved by the original run, does not fail alone the same "
            "way under any stage: the script answers instead",
        )
        return None
    s.emit(
        "note",
        text=f"graph {k}, saved by the original run as it failed, fails alone the same "
        f"way: the stages and every later question are asked of it; no more runs of the script "
        f"(one took {original.seconds:.1f} s)",
    )
    s.emit("ladder_start", stages=list(GRAPH_STAGES))
    out = []
    for stage, outcome in zip(GRAPH_STAGES, outcomes):
        s.stage_outcomes[stage] = outcome
        same = s.fails_same(outcome)
        out.append(
            StageResult(
                stage=stage, kind=outcome.kind, summary=outcome.signature.short(), seconds=outcome.seconds, same=same
            )
        )
        s.emit("stage", stage=stage, outcome=outcome, same=same)
    s.stage_outcomes["none"] = s.baseline or s.runner(s.spec("none", "baseline-no-compile"))  # as the ladder
    s.ladder_from_graph = True
    return out
