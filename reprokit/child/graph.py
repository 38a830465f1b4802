"""Graph trials: compile a captured graph (cut down by the spec's edit) with the stage, run it, check it.

The graph runs as it ran in the script: the script's prelude (custom ops it registered, compiler hooks) is run
first, and the call-time context (autocast, grad mode, default dtype, deterministic algorithms) is replayed.
With an accuracy check, an edit is judged spliced into the whole graph (child/splice): the same outputs the
original run compared must diverge, not some intermediate value a cut happened to expose.
"""

from __future__ import annotations

import json
import os

from reprokit.child import compile_limit
from reprokit.child.accuracy import (
    MORE_ACCURATE,
    AccuracyFailure,
    compiled_more_accurate,
    eager_reference,
    measure,
    verdict,
    write_measures,
)
from reprokit.child.backends import backend_for
from reprokit.child.gradients import gradient_measures
from reprokit.child.state import TrialState


def run_prelude(case_dir: str) -> None:
    """Run the script's prelude and hook assignments saved with the case, in a namespace of their own."""
    import torch

    with open(os.path.join(case_dir, "meta.json")) as f:
        meta = json.load(f)
    path = os.path.join(case_dir, "prelude.py")
    namespace = {"__name__": "__main__", "torch": torch}
    if os.path.exists(path):
        with open(path) as f:
            exec(compile(f.read(), "<the script's prelude>", "exec"), namespace)
    for line in meta.get("hook_lines", []):
        exec(line, namespace)


def run_graph(state: TrialState) -> None:
    """Compile the edited graph with the spec's stage, run it (and its backward when asked), check accuracy."""
    import torch

    from reprokit.fx.materialize import load_case

    spec = state.spec
    assert spec.case is not None  # a graph trial names its case folder
    state.compiled = True
    run_prelude(spec.case)  # before loading: the graph may call ops the prelude registers
    gm, inputs, meta = load_case(spec.case)
    for line in meta.get("config_lines", []):
        exec(line, {"torch": torch})  # the user's own non-default compiler config, as captured
    # The flags in force, as a script trial records them: the config flips are asked of a graph too.
    state.record_configs((meta.get("compile_args") or {}).get("options"))
    state.note = ""
    _compile_and_check(state, gm, inputs, meta)


def in_context(fn, ctx):
    """fn called in the script's call-time state. Only the forward: the script's backward ran after it left
    its autocast region, as autocast's documentation recommends, and a replay must not put it back in."""
    from reprokit.child import context

    def call(*args):
        with context.replay(ctx):
            return fn(*args)

    return call


def compile_graph(gm, inputs, backend, dynamic=None):
    """The graph compiled by `backend` as Dynamo would hand it over (dynamic: its sizes symbolic, as they were)."""
    import torch

    from reprokit.fx.materialize import has_higher_order_ops

    if has_higher_order_ops(gm):
        # Dynamo cannot re-trace its own higher-order ops: hand the graph to the backend as Dynamo does.
        return backend(gm, inputs)
    from reprokit import compat

    # Not fullgraph=True: under it torch reports a kernel's runtime error as "Attempt to trace generator".
    # Kept as ours under TORCH_BISECT_BACKEND (a subsystem trial), which torch would swap for its bare backend:
    # the script's mode and options, and the state saved once compiled, would go.
    return compat.compile_keeping_backend(torch.compile, gm, backend=backend, dynamic=dynamic)


def _saving_state(state: TrialState, backend):
    """`backend`, saving the trial's state once it has compiled: the graph runs only after, and a crash there
    (a kernel that aborts) would otherwise lose torch's counters and the application the spec points at."""

    def compile_then_save(gm, inputs):
        compiled = compile_limit.within(state, 0, lambda: backend(gm, inputs))
        # Counted once compiled, not before: a trial whose state shows no graph hung compiling (hang_phase), and
        # the probe saves the state mid-compile too (child/probe.py).
        state.graphs = 1
        state.save_state()
        return compiled

    return compile_then_save


def _compile_and_check(state: TrialState, gm, inputs, meta) -> None:
    from reprokit.child import context
    from reprokit.child.splice import spliced
    from reprokit.fx.materialize import build

    spec = state.spec
    overrides = spec.compile_overrides or {}  # the bisect's modes question, asked of the graph
    args = {**(meta.get("compile_args") or {}), **({"mode": overrides["mode"]} if "mode" in overrides else {})}
    backend = _saving_state(state, backend_for(spec.stage, args, spec.config))
    dynamic = True if any(m.get("symbolic") for m in meta.get("inputs", [])) else None
    dynamic = overrides.get("dynamic", dynamic)
    ctx = meta.get("context")
    if spec.check_accuracy and spec.edit is not None:
        compiled = spliced(gm, spec.edit, lambda sub, sub_inputs: compile_graph(sub, sub_inputs, backend, dynamic))
    else:
        with context.replay(ctx):  # cut nodes' values as the script computed them
            gm, inputs = build(gm, inputs, spec.edit)
        compiled = compile_graph(gm, inputs, backend, dynamic)
    compiled, eager = in_context(compiled, ctx), in_context(gm, ctx)  # compiled on its first call: in context
    if not spec.check_accuracy:
        out = compiled(*inputs)
        if spec.run_backward:
            _backward(out)
        return
    grads = gradient_measures(gm, compiled, inputs, run_eager=eager) if spec.run_backward else None
    reference = eager_reference(gm, inputs, run_eager=eager)
    out = compiled(*inputs)
    found = (measure(reference, out, inputs) if reference is not None else []) + (grads or [])
    write_measures(os.path.join(state.dir, "accuracy.json"), found)
    mismatch, note = verdict(found)
    if not note and compiled_more_accurate(found):
        note = MORE_ACCURATE  # within torch's tolerance, yet what the script's stricter check saw
    state.note = note or ""  # compiled closer to float64 than eager: said, and not a failure
    if mismatch:
        state.accuracy_failure = mismatch
        raise AccuracyFailure(mismatch)
    if spec.run_backward:
        _backward(out)


def _backward(out) -> list:
    import torch

    outs = [
        o
        for o in (out if isinstance(out, (list, tuple)) else (out,))
        if isinstance(o, torch.Tensor) and o.requires_grad
    ]
    if outs:
        torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    return outs
