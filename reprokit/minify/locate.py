"""Find the failing graph a minify run cuts: captured from the script, then run alone."""

from __future__ import annotations

import os
from dataclasses import dataclass

from reprokit.data.records import TrialSpec, file_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import read_json
from reprokit.data.signature import Signature
from reprokit.data.trial_files import trial_record


@dataclass
class Located:
    """A captured graph, and how it fails alone (signature None: it passes alone; `why` says how it was run)."""

    case: str
    meta: dict
    signature: Signature | None
    run_backward: bool
    why: str = ""
    note: str = ""  # what the graph trial said, e.g. that compiled is the more accurate one

    @property
    def in_context(self) -> bool:
        """Whether the graph runs with something of the script's besides its inputs: context, ops, hooks."""
        from reprokit.data.stages import context_differs

        m = self.meta
        return bool(m.get("prelude") or m.get("hook_lines")) or context_differs(m.get("context"))


def capture_spec(v, facts: RunFacts, stage: str, backward: bool, label: str) -> TrialSpec:
    """The script trial that saves graph v.graph (or its backward) with everything it needs to run elsewhere."""
    return TrialSpec(
        mode="script",
        script=v.script,
        argv=tuple(v.argv),
        cwd=facts.cwd,
        script_hash=file_hash(v.script),
        stage=stage,
        only_graph=v.graph if v.graph_count > 1 else None,
        other_stage=v.last_passing_stage or "eager",
        save_graph=v.graph,
        check_accuracy=facts.options.get("check_accuracy", False),
        max_input_bytes=facts.max_input_bytes,
        capture_backward=backward,
        ranks=facts.ranks,
        label=label,
    )


def graph_alone(runner, case: str, stage: str, accuracy: bool, backward: bool, label: str) -> Located:
    """The case folder's graph run alone through `stage`: how it fails (a graph trial)."""
    out = runner(
        TrialSpec(mode="graph", stage=stage, case=case, check_accuracy=accuracy, run_backward=backward, label=label)
    )
    return Located(
        case,
        read_json(os.path.join(case, "meta.json")),
        out.signature if out.failed else None,
        backward,
        note=out.note or "",
    )


def find_failing_graph(runner, v, facts: RunFacts, stage, accuracy):
    """A Located graph, failing alone where it can; or a string saying why no graph could be captured.

    Forward first. When only the backward fails, the backward graph AOT autograd hands inductor is captured
    and minified as a graph of its own; failing that, the Dynamo graph is run forward and backward.
    """

    def capture(backward: bool, label: str):
        out = runner(capture_spec(v, facts, stage, backward, label))
        case = os.path.join(out.trial_dir, "case")
        return out, case if os.path.exists(os.path.join(case, "meta.json")) else None

    def alone(case, backward, label) -> Located:
        return graph_alone(runner, case, stage, accuracy, backward, label)

    if v.graph_case and os.path.exists(os.path.join(v.graph_case, "meta.json")):
        # The original run saved it, and the bisect saw it fail alone: no run of the script to capture it again.
        saved = alone(v.graph_case, False, "graph-alone")
        if saved.signature is not None:
            return saved
    cap, case = capture(False, f"capture-graph-{v.graph}")
    if case is None:
        return f"capturing graph {v.graph} failed ({cap.signature.short()})"
    forward = alone(case, False, "graph-alone")
    if forward.signature is not None:
        return forward
    if v.graph not in (trial_record(cap.trial_dir).get("backward_graphs") or []):
        forward.why = f"graph {v.graph} passes when run alone through {stage}"
        return forward
    if stage == "inductor":
        _, bw_case = capture(True, f"capture-backward-{v.graph}")
        if bw_case is not None:
            found = alone(bw_case, False, "backward-graph-alone")
            if found.signature is not None:
                return found
    both = alone(case, True, "graph-alone-bw")
    if both.signature is None:
        both.why = f"graph {v.graph} passes alone, forward and backward, through {stage}"
    return both
