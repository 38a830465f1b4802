"""Graph trials: compile a captured graph (cut down by the spec's edit) with the stage, run it, check it."""
from __future__ import annotations

from reprokit.child.accuracy import AccuracyFailure, compare_outputs, eager_reference
from reprokit.child.backends import backend_for
from reprokit.child.state import TrialState


def run_graph(state: TrialState) -> None:
    """Compile the edited graph with the spec's stage, run it (and its backward when asked), check accuracy."""
    import torch

    from reprokit.fx.materialize import build, has_higher_order_ops, load_case

    spec = state.spec
    state.compiled = True
    gm, inputs, meta = load_case(spec.case)
    for line in meta.get("config_lines", []):
        exec(line, {"torch": torch})  # the user's own non-default compiler config, as captured
    gm, inputs = build(gm, inputs, spec.edit)
    reference = eager_reference(gm, inputs) if spec.check_accuracy else None
    backend = backend_for(spec.stage, meta.get("compile_args"), spec.config)
    if has_higher_order_ops(gm):
        # Dynamo cannot re-trace its own higher-order ops: hand the graph to the backend as Dynamo does.
        compiled = backend(gm, inputs)
    else:
        # Not fullgraph=True: under it torch reports a kernel's runtime error as "Attempt to trace generator".
        compiled = torch.compile(gm, backend=backend)
    state.graphs = 1
    out = compiled(*inputs)
    if reference is not None:
        mismatch = compare_outputs(reference, out)
        if mismatch:
            state.accuracy_failure = mismatch
            raise AccuracyFailure(mismatch)
    if spec.run_backward:
        outs = [o for o in (out if isinstance(out, (list, tuple)) else (out,))
                if isinstance(o, torch.Tensor) and o.requires_grad]
        if outs:
            torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    state.note = ""
