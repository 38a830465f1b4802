"""Find the failing graph a minify run cuts: captured from the script, and failing when run alone."""
from __future__ import annotations

import os

from reprokit.data.records import TrialSpec, file_hash
from reprokit.data.rundir import read_json
from reprokit.data.trial_files import trial_record


def find_failing_graph(runner, v, opts, info, stage, accuracy):
    """(case folder, meta, graph-level signature, run_backward) of a captured graph that fails alone, or why not.

    Forward first. When only the backward fails, the backward graph AOT autograd hands inductor is captured
    and minified as a graph of its own; failing that, the Dynamo graph is run forward and backward.
    """
    base = dict(mode="script", script=v.script, argv=tuple(v.argv), cwd=opts["cwd"], script_hash=file_hash(v.script))
    budget = info.get("max_input_bytes", 64 << 20)

    def capture(backward: bool, label: str):
        out = runner(TrialSpec(stage=stage, only_graph=v.graph if v.graph_count > 1 else None,
                               other_stage=v.last_passing_stage or "eager", capture=v.graph,
                               check_accuracy=opts.get("check_accuracy", False), max_input_bytes=budget,
                               capture_backward=backward, label=label, **base))
        case = os.path.join(out.trial_dir, "case")
        return out, case if os.path.exists(os.path.join(case, "meta.json")) else None

    def alone(case, backward, label):
        return runner(TrialSpec(mode="graph", stage=stage, case=case, check_accuracy=accuracy, run_backward=backward,
                                label=label))

    cap, case = capture(False, f"capture-graph-{v.graph}")
    if case is None:
        return f"capturing graph {v.graph} failed ({cap.signature.short()})"
    out = alone(case, False, "graph-alone")
    if out.failed:
        return case, read_json(os.path.join(case, "meta.json")), out.signature, False
    state = trial_record(cap.trial_dir)
    if v.graph not in (state.get("backward_graphs") or []):
        return f"graph {v.graph} passes when run alone through {stage}; the failure needs the rest of the script"
    if stage == "inductor":
        bw_cap, bw_case = capture(True, f"capture-backward-{v.graph}")
        if bw_case is not None:
            out = alone(bw_case, False, "backward-graph-alone")
            if out.failed:
                return bw_case, read_json(os.path.join(bw_case, "meta.json")), out.signature, False
    out = alone(case, True, "graph-alone-bw")
    if out.failed:
        return case, read_json(os.path.join(case, "meta.json")), out.signature, True
    return f"graph {v.graph} passes alone, forward and backward, through {stage}"
