"""A capture of a job that ended in error with no exception from torch (its own check, an assert, sys.exit(1)):
each compiled graph's latest call was kept (capture/recent_call). Offline, each graph is asked compiled against
eager, float64 as referee (a graph trial with the accuracy check, child/accuracy); the first that diverges alone
becomes the captured failure the rest of `bisect --from-capture` works on. None diverging alone is one line, exit 3:
the error needs several graphs together, or comes from code outside them."""

from __future__ import annotations

import os
from dataclasses import dataclass

from reprokit.bisect.capture_folder import CapturedFailure, exited_ranks, failing_ranks
from reprokit.capture import files
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import read_json_dict
from reprokit.errors import NothingToIsolate, ReprokitError


@dataclass(frozen=True)
class KeptCalls:
    """One rank's exit.json and the case folder of each graph's latest call, by graph index."""

    root: str
    rank: str
    record: dict
    cases: dict

    @property
    def script(self) -> str:
        return self.record.get("script") or os.path.join(self.root, "script.py")


def kept_calls(root: str, torch_version: str) -> KeptCalls | None:
    """The lowest rank's kept calls, when no rank wrote a failure (a graph that raised is bisected as such) and a
    rank ended in error with its calls written; None otherwise."""
    if failing_ranks(root):
        return None
    for rank in exited_ranks(root):
        record = read_json_dict(os.path.join(files.rank_dir(root, rank), files.EXIT))
        if record is None:
            continue
        recorded = record.get("torch_version")
        if recorded != torch_version:
            raise ReprokitError(
                f"{root} was captured with torch {recorded}, this is torch {torch_version}: bisect it "
                f"where torch {recorded} is installed, or capture the job again here"
            )
        calls = os.path.join(files.rank_dir(root, rank), files.CALLS)
        cases = {
            int(g[1:]): os.path.join(calls, g)
            for g in _names(calls)
            if g[1:].isdigit() and os.path.isfile(os.path.join(calls, g, "meta.json"))
        }
        if cases:
            return KeptCalls(root, rank, record, dict(sorted(cases.items())))
    return None


def diverging_graph(kept: KeptCalls, runner, emit) -> CapturedFailure:
    """The first graph whose kept call, compiled by the job's own backend, diverges from eager (float64 referee);
    NothingToIsolate in one line when none does alone."""
    graphs = list(kept.cases)
    emit(
        Event.NOTE,
        text=f"the job ended in error ({kept.record.get('exit')}) with no exception from torch: "
        f"its {_graphs(len(graphs))}, each asked compiled against eager, float64 as referee",
    )
    outcomes = runner.map(
        [
            TrialSpec(
                mode="graph",
                stage=_stage(kept.cases[k]),
                case=kept.cases[k],
                check_accuracy=True,
                label=f"graph-{k}-accuracy",
            )
            for k in graphs
        ]
    )
    for k, outcome in zip(graphs, outcomes):
        if outcome is not None and outcome.kind == OutcomeKind.ACCURACY:
            failure = {
                **{key: kept.record.get(key) for key in ("rank", "process_group", "torch_version", "script", "exit")},
                "kind": "accuracy",
                "signature": outcome.signature.to_dict(),
                "phase": "run",
                "graph": k,
                "graphs_seen": kept.record.get("graphs_seen") or len(graphs),
                "note": outcome.note or "",
            }
            emit(Event.NOTE, text=f"graph {k} of rank {kept.rank} diverges alone: {outcome.note or 'compiled differs'}")
            return CapturedFailure(
                kept.root, kept.rank, kept.cases[k], failure, read_json_dict(_summary(kept.root)) or {}
            )
    script = os.path.basename(kept.script)
    raise NothingToIsolate(
        f"no captured graph diverges from eager alone ({_graphs(len(graphs))} of rank {kept.rank}, compiled against eager, "
        f"float64 as referee): the job's error needs several graphs together, or comes from code outside them; "
        f"run `reprokit bisect {script}` in place"
    )


def _graphs(n: int) -> str:
    return f"{n} compiled graph" + ("" if n == 1 else "s")


def _stage(case: str) -> str:
    """The stage that compiles the graph as the job did: inductor, or the job's own backend."""
    backend = ((read_json_dict(os.path.join(case, "meta.json")) or {}).get("compile_args") or {}).get("backend")
    return "inductor" if backend in (None, "inductor") else "user"


def _summary(root: str) -> str:
    return os.path.join(root, files.SUMMARY)


def _names(folder: str) -> list:
    try:
        return os.listdir(folder)
    except OSError:
        return []
