"""The torch.compile stand-in and the per-graph router of a script trial.

The script's torch.compile (and torch._dynamo.optimize) calls go to torch as the script made them, except that
the backend is a router: every graph Dynamo hands over is compiled with the trial's stage, captured when the spec
asks, and checked against eager when it asks.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from reprokit.child import caught, compile_limit
from reprokit.child.accuracy import AccuracyFailure, eager_reference, measure, verdict
from reprokit.child.backends import backend_for, backend_name, inductor_observing
from reprokit.child.gradients import gradient_measures
from reprokit.child.observe import Observer, user_frame
from reprokit.child.state import TrialState


def install_router(state: TrialState, observer: Observer | None = None) -> None:
    """Replace torch.compile and torch._dynamo.optimize by stand-ins that route every graph through the stage."""
    import torch

    from reprokit import compat

    original_compile = torch.compile
    inside = [0]  # our own torch.compile calls in progress: torch.compile calls torch._dynamo.optimize itself

    def compile(model=None, **kwargs):
        """torch.compile with the router as the backend. backend, mode and options are the router's to apply;
        every other keyword, whatever this torch knows, reaches torch.compile unchanged."""
        if from_higher_order_op(sys._getframe(1)):  # torch's own compile, with torch's own backend
            inside[0] += 1
            try:
                return original_compile(model, **kwargs) if model is not None else original_compile(**kwargs)
            finally:
                inside[0] -= 1
        backend = kwargs.pop("backend", None) or "inductor"
        mode, options = kwargs.pop("mode", None), kwargs.pop("options", None)
        options = dynamo_options(options, kwargs)
        state.record_compile(
            backend_name(backend), mode, options, kwargs.get("dynamic"), kwargs.get("fullgraph", False)
        )
        # `bisect --kind slow` asks what another mode or dynamic setting would do
        overrides = state.spec.compile_overrides
        kwargs["dynamic"] = overrides.get("dynamic", kwargs.get("dynamic"))
        router = GraphRouter(state, backend, overrides.get("mode", mode), options, kwargs["dynamic"])
        site = user_frame(sys._getframe(1)) if observer else None

        def build(m):
            check_compile_arguments(backend, mode, options, kwargs.get("dynamic"))  # as torch.compile does
            inside[0] += 1
            try:
                compiled = compat.compile_keeping_backend(original_compile, m, backend=router, **kwargs)
            finally:
                inside[0] -= 1
            compiled = caught.watched(state, compiled)  # an exception the script catches is still the failure
            return observer.timed(compiled, m, site, router.compiled) if observer else compiled

        return build if model is None else build(model)

    torch.compile = compile
    compat.wrap_dynamo_optimize(lambda original_optimize: routed_optimize(state, inside, original_optimize))


def routed_optimize(state: TrialState, inside: list, original_optimize):
    """torch._dynamo.optimize's stand-in: `inside` counts the router's own torch.compile calls in progress (torch.compile
    calls it itself)."""

    def optimize(*args, **kwargs):
        """torch._dynamo.optimize(backend, ...) with the router as the backend (not timed: it may be a
        context manager as well as a decorator)."""
        if inside[0]:
            return original_optimize(*args, **kwargs)
        backend = (args[0] if args else kwargs.pop("backend", None)) or "inductor"
        check_compile_arguments(backend, None, None, kwargs.get("dynamic"))  # as torch's optimize does
        state.record_compile(backend_name(backend), None, None, kwargs.get("dynamic"), kwargs.get("nopython", False))
        overrides = state.spec.compile_overrides
        kwargs["dynamic"] = overrides.get("dynamic", kwargs.get("dynamic"))
        router = GraphRouter(state, backend, overrides.get("mode"), None, kwargs["dynamic"])
        return original_optimize(router, *args[1:], **kwargs)

    return optimize


def check_compile_arguments(backend: Any, mode: str | None, options: dict | None, dynamic: bool | None) -> None:
    """Raise what torch.compile raises for these arguments as it is called (an unknown backend name, mode or
    inductor option), by building the backend object it builds from them. The router takes them away from
    torch.compile, which then never checks them: a source candidate that cut backend="eager" to "er" passed its
    trials and failed only once run as written (issue 50)."""
    from reprokit import compat

    options = {k: v for k, v in (options or {}).items() if k not in ("guard_filter_fn", "use_aoti")}  # its own
    wrapper = compat.compile_wrapper()
    if isinstance(backend, str) and backend == "inductor":
        compat.inductor_backend(mode, options, dynamic)
    elif wrapper is not None:
        wrapper(backend, mode, options, dynamic)
    elif isinstance(backend, str):
        compat.lookup_backend(backend)


def dynamo_options(options, kwargs: dict):
    """The options left for the stage's backend; guard_filter_fn, which torch.compile takes out of options for
    Dynamo itself, goes to torch.compile in kwargs (given to inductor's config it raised, and dropped it let
    Dynamo keep guards the script turned off)."""
    if not isinstance(options, dict) or "guard_filter_fn" not in options:
        return options
    kwargs["options"] = {"guard_filter_fn": options["guard_filter_fn"]}
    return {k: v for k, v in options.items() if k != "guard_filter_fn"} or None


def from_higher_order_op(frame) -> bool:
    """torch.cond and its kin, run eagerly, compile their own body with a backend of their choosing
    (torch/_higher_order_ops/utils.py): torch's step, not the script's torch.compile (pytorch#180354's case)."""
    from reprokit import compat

    path = os.path.abspath(frame.f_code.co_filename)
    return path.startswith(os.path.join(compat.TORCH_ROOT, "_higher_order_ops") + os.sep)


class GraphRouter:
    """The backend torch.compile gets: graph k is compiled with the stage (only_graph: that graph with the
    stage, the others with other_stage), captured when the spec asks, checked against eager when it asks."""

    def __init__(self, state: TrialState, user_backend: Any, mode, options, dynamic):
        self.state = state
        self.user_backend = user_backend  # as the script passed it: a name or a callable
        self.compiled = {"graphs": 0, "ops": 0}
        self.args = {"backend": backend_name(user_backend), "mode": mode, "options": options, "dynamic": dynamic}

    def __call__(self, gm, example_inputs, **compile_kwargs):
        # torch >= 2.15 hands the backend torch.compile's mode/options/name as keywords: the router holds mode and
        # options already (self.args) and builds each stage's backend from them; name only labels the compile.
        state, spec = self.state, self.state.spec
        k = state.graphs
        state.graphs += 1
        self.compiled["graphs"] += 1  # what this torch.compile call compiled, for doctor's per-callable count
        self.compiled["ops"] += sum(1 for n in gm.graph.nodes if n.op == "call_function")
        stage = spec.stage if spec.only_graph in (None, k) else spec.other_stage
        state.save_graph_code(k, gm)
        if spec.capture_failing:
            write_ahead(state, k, gm, example_inputs)
        if state.flag_values is None:
            state.record_configs(self.args["options"])
        backward_capture = spec.save_graph == k and spec.capture_backward
        if spec.save_graph == k and not backward_capture:
            from reprokit.child import context
            from reprokit.fx.capture import capture_graph

            # Dynamo calls the backend inside the script's call: the ambient state now is the graph's context.
            state.note = capture_graph(
                gm,
                example_inputs,
                os.path.join(state.dir, "case"),
                max_input_bytes=spec.max_input_bytes,
                compile_args=state.compile_args,
                script=spec.script,
                context=context.capture(),
            )
        state.save_state()
        try:
            if backward_capture:
                compiled = self.capturing_backward()(gm, example_inputs)
            elif spec.edit is not None and k == (spec.only_graph or 0):
                compiled = self.spliced(gm, stage)
            else:
                backend = backend_for(stage, self.args, spec.config, self.user_backend, on_piece=state.record_piece)
                compiled = compile_limit.within(state, k, lambda: backend(gm, example_inputs))
        except BaseException:
            state.fail(k)
            save_failing(state, k, gm, example_inputs)
            raise
        state.save_state()  # counters after compile survive a crash at run time
        state.mark("")
        check = spec.check_accuracy and stage != "none" and spec.only_graph in (None, k)
        if spec.capture_failing:  # a mismatch the script's own check finds later needs each graph's last call
            from reprokit.capture.recent_call import RecentCalls
            from reprokit.child import context

            state.recent = state.recent or RecentCalls(spec.max_input_bytes)
            state.recent.compiled(k, gm, example_inputs, context.capture(), state.compile_args)
        return checked(state, k, gm, compiled, check)

    def spliced(self, gm, stage: str):
        """Graph k with only the spec's edit compiled by the stage and the rest eager: the minifier's candidate
        judged by the script itself (its own check, its own tolerance)."""
        from reprokit.child.splice import spliced

        backend = backend_for(stage, self.args, self.state.spec.config, self.user_backend)
        assert self.state.spec.edit is not None  # a splice trial names its edit
        return spliced(gm, self.state.spec.edit, lambda sub, inputs: backend(sub, inputs))

    def capturing_backward(self):
        """Inductor, saving the backward graph AOT autograd hands it (compiled when backward first runs)."""
        from reprokit.fx.capture import capture_graph

        state = self.state

        def on_graph(aten_gm, inputs, is_backward):
            if is_backward:
                state.note = capture_graph(
                    aten_gm,
                    inputs,
                    os.path.join(state.dir, "case"),
                    max_input_bytes=state.spec.max_input_bytes,
                    compile_args={**(state.compile_args or {}), "graph": "backward"},
                    script=state.spec.script,
                )
                state.save_state()

        return inductor_observing(self.args, state.spec.config, on_graph)


def checked(state: TrialState, k: int, gm, compiled, check_accuracy: bool):
    """Graph k's compiled callable, noting a failure at run time, comparing its first two calls with eager when
    asked (outputs, mutated inputs, and on the first call the input gradients, from runs on copies: the
    script's own call is unchanged), keeping its latest call when the original run asks (state.recent), and
    noting when its backward runs."""
    calls = [0]
    running = f"run {k}"
    recent = state.recent

    def observed_call(*args):
        calls[0] += 1
        if recent is not None:
            recent.before(k, args)
        check = check_accuracy and calls[0] <= 2
        state.mark(running)  # the gradient check below calls the compiled graph too
        reference = eager_reference(gm, args) if check else None
        grads = gradient_measures(gm, compiled, args) if check and calls[0] == 1 else None
        try:
            out = compiled(*args)
        except BaseException:
            state.fail(k)
            save_failing(state, k, gm, args)
            raise
        state.mark("")
        if recent is not None:
            recent.after(k, out)
        for found in (measure(reference, out, args) if reference is not None else None, grads):
            mismatch, note = verdict(found)
            if note:  # compiled is the closer one to float64: no bug to report
                state.note = note
                state.save_state()
            if mismatch:
                state.fail(k, accuracy=f"graph {k}: {mismatch}")
                raise AccuracyFailure(state.accuracy_failure)
        watch_backward(state, k, out)
        return out

    return observed_call


FAILING_CASE = "failing_case"  # the trial folder's copy of the first graph that raised (spec.capture_failing)


def write_ahead(state: TrialState, k: int, gm, example_inputs) -> None:
    """Graph k written out before it compiles, and marked compiling: a signal that kills the original run leaves
    the graph it died in (capture/crash.py, as `reprokit capture` writes ahead); never raises."""
    from reprokit.capture.crash import Ahead, written_ahead
    from reprokit.child import context

    # The trial's own faulthandler (stacks.txt) stays: the trial's signal is its exit status.
    state.ahead, failed = written_ahead(
        state.ahead,
        lambda: Ahead(state.dir, {}, own_faulthandler=False),
        k,
        gm,
        example_inputs,
        state.spec.max_input_bytes,
        compile_args=state.compile_args,
        script=state.spec.script,
        context=context.capture(),
    )
    if failed is not None:
        state.note = "; ".join(x for x in (state.note, f"graph {k} not written ahead ({type(failed).__name__})") if x)


def save_failing(state: TrialState, k: int, gm, inputs) -> None:
    """Graph k, which just raised, saved with its inputs when the spec asks and no graph was saved before; never
    raises (the script's own failure is the trial's answer)."""
    if not state.spec.capture_failing or state.failing_saved:
        return
    state.failing_saved = True
    try:
        from reprokit.child import context
        from reprokit.fx.capture import capture_graph

        capture_graph(
            gm,
            list(inputs),
            os.path.join(state.dir, FAILING_CASE),
            max_input_bytes=state.spec.max_input_bytes,
            compile_args=state.compile_args,
            script=state.spec.script,
            context=context.capture(),
        )
    except Exception as e:  # the answer stands without it: the bisect asks the script instead
        state.note = "; ".join(
            x for x in (state.note, f"the failing graph could not be saved ({type(e).__name__})") if x
        )
    state.save_state()


def watch_backward(state: TrialState, k: int, out) -> None:
    """Note in state.backward_ran when graph k's backward runs."""
    import torch

    def mark(grad):
        state.backward_ran.add(k)
        return grad

    for t in out if isinstance(out, (list, tuple)) else (out,):
        if isinstance(t, torch.Tensor) and t.requires_grad and k not in state.backward_ran:
            t.register_hook(mark)
