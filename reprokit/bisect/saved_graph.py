"""The original run's failing graph, saved as it raised (TrialSpec.capture_failing): the stage ladder is asked of
that graph alone, and when it fails there the same way it names the failing stage and graph at once; every later
question of that stage (the subsystem and lowering search, its re-run, the config flips, torch's logs) and minify
are then graph trials on it, seconds each, instead of runs of the whole script. When the graph alone does not
fail the same way, the script answers, as it always did.

A mismatch the script's own check found raises in no graph: the original then saved each graph as of its recent
call (capture/recent_call), and the one that diverges from eager, compiled (float64 referee: child/accuracy.py),
stands for the script the same way, every trial of it checked against eager (bisect/recent_calls.py)."""

from __future__ import annotations

import os
from dataclasses import replace

from reprokit.bisect.ladder import custom_ops, dynamo_hang, record_stage
from reprokit.bisect.recent_calls import diverging_graph
from reprokit.bisect.session import Session
from reprokit.capture import crash
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome, TrialSpec

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
    if original.kind != OutcomeKind.CRASH or original.signature.exc_type not in crash.FATAL_SIGNALS:
        return None, None  # killed from outside (SIGKILL, SIGTERM, a timeout): no graph's doing
    for folder in ["", *ranks]:
        for ahead in crash.ahead_folders(os.path.join(original.trial_dir, folder)):
            k = crash.marked(ahead)[1]
            ahead_case = crash.graph_case(ahead, k)
            if ahead_case is not None:
                return ahead_case, k
    return None, None


def saved_graph(s: Session, original: Outcome) -> tuple[str | None, int | None]:
    """(case folder, graph index) of the graph that stands for the script: the one the original saved as it
    failed, else, for a mismatch the script's own check found, the one that diverges from eager as of its recent
    call (s.graph_accuracy: its trials are checked against eager); looked for once."""
    if s.saved_graph is None:
        case, k = saved_case(original)
        if case is None and s.opts.kind == "failure" and original.user_backend == "inductor":
            case, k = diverging_graph(s, original)
            s.graph_accuracy = case is not None
        s.saved_graph = (case, k)
    return s.saved_graph


def adopt_saved_graph(s: Session, found: Isolation, original: Outcome, stage: str) -> tuple[Isolation, Outcome | None]:
    """The saved graph run alone under `stage`; when it fails the same way it stands for the script from now on
    (s.graph_case; the isolation's graph and graph_case) and its outcome is returned beside the isolation (its
    counters are the graph's own); else the isolation as it was, and None."""
    case, k = saved_graph(s, original)
    if case is None or stage not in GRAPH_STAGES[1:] or s.opts.kind != "failure":
        return found, None
    spec = TrialSpec(mode="graph", stage=stage, case=case, check_accuracy=s.graph_accuracy, label="graph-alone")
    alone = s.runner(spec)
    if not s.fails_same(alone):
        s.emit(
            Event.NOTE,
            text=f"graph {k} as the original run saved it does not fail alone the "
            f"same way ({alone.signature.short()[:120]}): the script answers instead",
        )
        return found, None
    s.graph_case, s.graph_stage = case, stage
    s.emit(Event.GRAPH, graph=k, count=original.graphs)
    return replace(found, graph=k, graph_case=case), alone


def graph_ladder(s: Session, original: Outcome) -> list | None:
    """The ladder asked of the saved graph, every stage at once; None (nothing asked or nothing kept) when there is
    no saved graph, or it does not fail alone the same way under any stage, or the script's custom ops call for
    the crossref stage."""
    if (
        s.opts.kind != "failure"
        or dynamo_hang(original)
        or original.user_backend != "inductor"
        or custom_ops(s, original)
    ):
        return None
    case, k = saved_graph(s, original)
    if case is None:
        return None
    accuracy = s.graph_accuracy
    outcomes = s.runner.map(
        [
            TrialSpec(mode="graph", stage=st, case=case, check_accuracy=accuracy, label=f"graph-stage-{st}")
            for st in GRAPH_STAGES
        ]
    )
    first = next(
        (i for i, x in enumerate(outcomes) if x is not None and s.target is not None and s.target.matches(x.signature)),
        None,
    )
    if first is None:
        s.emit(
            Event.NOTE,
            text=f"graph {k}, saved by the original run, does not fail alone the same "
            "way under any stage: the script answers instead",
        )
        return None
    saved, more = (
        ("as of its recent call", "one more run of the script, after the repro, confirms it")
        if accuracy
        else ("as it failed", "no more runs of the script")
    )
    s.emit(
        Event.NOTE,
        text=f"graph {k}, saved by the original run {saved}, fails alone the same way: the stages and every "
        f"later question are asked of it; {more} (one took {original.seconds:.1f} s)",
    )
    s.emit(Event.LADDER_START, stages=list(GRAPH_STAGES))
    out = []
    for stage, outcome in zip(GRAPH_STAGES, outcomes):
        out.append(record_stage(s, stage, outcome))
    s.stage_outcomes["none"] = s.baseline or s.runner(s.spec("none", "baseline-no-compile"))  # as the ladder
    s.ladder_from_graph = True
    return out


def confirm_graph(s: Session, isolation: Isolation) -> bool:
    """The one run of the script that ties the adopted graph to the script's failure: that graph alone compiled by
    the failing stage, the rest by the stage before it, fails the same way (a mismatch its own check finds)."""
    k, stage = isolation.graph, isolation.failing_stage
    assert stage is not None  # deferred only once a stage failed
    spec = s.script_spec(
        stage,
        "graph-confirm",
        only_graph=k if isolation.graph_count > 1 else None,
        other_stage=isolation.last_passing_stage or "eager",
    )
    confirmed = s.fails_same(s.runner(spec))
    if not confirmed:
        s.emit(Event.NOTE, text=f"graph {k} diverges from eager alone, but the script with it alone compiled passes")
    return confirmed
