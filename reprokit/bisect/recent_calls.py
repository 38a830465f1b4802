"""A mismatch the script's own check found (child/comparisons.py): no graph raised, so none was saved as it failed.
The original saved each graph as of its latest call instead (capture/recent_call); each is compiled by the user's
inductor and checked against eager, with the float64 referee (child/accuracy.py), side by side: graph trials of
seconds each, where asking the script which graph diverges costs a run of it per graph."""

from __future__ import annotations

from reprokit.bisect.session import Session
from reprokit.data.events import Event
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.trial_files import recent_calls


def diverging_graph(s: Session, original: Outcome) -> tuple[str | None, int | None]:
    """(case folder, graph index) of the first graph, in the order they compiled, whose recent call diverges from
    eager the way the script's check saw it (compiled the worse of the two against float64); (None, None) when
    the original saved none, or none diverges alone (the script answers, as before)."""
    cases = recent_calls(original.trial_dir)
    if not cases or s.target is None or not s.target.reports_mismatch():
        return None, None
    specs = [
        TrialSpec(mode="graph", stage="inductor", case=case, check_accuracy=True, label=f"graph-{k}-against-eager")
        for k, case in cases.items()
    ]
    outcomes = dict(zip(cases, s.runner.map(specs)))
    diverging = [k for k, x in outcomes.items() if x is not None and s.target.matches(x.signature)]
    if not diverging:
        said = "; ".join(f"graph {k}: {x.note or x.signature.short()}"[:160] for k, x in outcomes.items() if x)
        s.emit(
            Event.NOTE,
            text=f"no graph the original run saved diverges from eager alone ({said}): the script answers instead",
        )
        return None, None
    k = diverging[0]
    if len(diverging) > 1:
        s.emit(
            Event.NOTE, text=f"graphs {', '.join(map(str, diverging))} each diverge from eager: graph {k}, the first"
        )
    return cases[k], k
