"""torch.compile as the script wrote it, its backend wrapped: the router's approach (child/router.py) with the
user's own backend and stage, so the run is the run as written, and what fails is noted where it fails."""

from __future__ import annotations

import sys
import time


def capturing_compile(rec, original_compile):
    """A torch.compile stand-in whose backend is the user's, wrapped by CapturingBackend (reprokit's own modules
    are imported at the first call: a process that never compiles, such as a compile worker, pays nothing)."""

    def compile(model=None, **kwargs):
        """torch.compile(model, **kwargs) with backend, mode and options applied by the wrapped backend."""
        from reprokit.child.backends import backend_name
        from reprokit.child.router import from_higher_order_op

        if from_higher_order_op(sys._getframe(1)):  # torch's own compile of a cond body: not the script's
            return original_compile(model, **kwargs) if model is not None else original_compile(**kwargs)
        backend = kwargs.pop("backend", None) or "inductor"
        args = {
            "backend": backend_name(backend),
            "mode": kwargs.pop("mode", None),
            "options": kwargs.pop("options", None),
            "dynamic": kwargs.get("dynamic"),
        }
        wrapped = CapturingBackend(rec, backend, args)
        if model is None:
            return lambda m: original_compile(m, backend=wrapped, **kwargs)
        return original_compile(model, backend=wrapped, **kwargs)

    return compile


class CapturingBackend:
    """The user's backend; a graph that fails to compile, or whose compiled code raises, is written out."""

    def __init__(self, rec, user_backend, compile_args: dict):
        self.rec, self.user_backend, self.compile_args = rec, user_backend, compile_args

    def __call__(self, gm, example_inputs, **_torch_kwargs):
        from reprokit.capture import deadline
        from reprokit.capture.check import GraphCheck
        from reprokit.child import context
        from reprokit.child.backends import backend_for

        rec = self.rec
        rec.compiles += 1
        k = rec.graph_seen(gm, example_inputs)
        ctx = context.capture()  # Dynamo calls the backend inside the script's call: its state is the graph's
        rec.before_compile(k, gm, example_inputs, ctx, self.compile_args)
        rec.mark(f"compile {k}")  # written ahead already says so; a hang needs it even when that failed
        started = time.monotonic()
        try:
            compiled = deadline.within(
                rec, lambda: backend_for("user", self.compile_args, None, self.user_backend)(gm, example_inputs)
            )
        except deadline.CompileTimedOut:
            return deadline.timed_out(rec, k, gm)
        except BaseException as e:
            rec.failed_at(k, gm, example_inputs, ctx, self.compile_args, e, "compile")
            raise
        rec.mark("")
        rec.longest_compile = max(rec.longest_compile, round(time.monotonic() - started, 3))
        compile_args = self.compile_args
        running = f"run {k}"
        recent = rec.recent
        recent.compiled(k, gm, example_inputs, ctx, compile_args)
        check = GraphCheck(rec, k, gm, ctx, compile_args) if rec.check else None
        # DDP's optimizer compiles each bucket's graph on fake inputs (and calls it once on them): its first call
        # on real ones writes it ahead again, with their values, for a crash in it.
        traced = [_fake(example_inputs)]

        def call(*args):
            if traced[0] and not _fake(args):
                traced[0] = False
                rec.before_compile(k, gm, args, ctx, compile_args)
            # Its backward runs later, from loss.backward(), outside this call: the recorder keeps what writing
            # this graph out would need (the args only until the next compiled call, and only when a backward
            # can follow), and notes when its backward starts (the marker names it then).
            backward = ctx.get("grad_enabled", True) and any(getattr(a, "requires_grad", False) for a in args)
            if backward:
                rec.last_call = (k, gm, args, ctx, compile_args)
            rec.mark(running)
            recent.before(k, args)  # each call kept, in memory, for an accuracy question (capture/recent_call)
            pending = check.before(args) if check else None
            try:
                out = compiled(*args)
            except BaseException as e:
                rec.failed_at(k, gm, args, ctx, compile_args, e, "run")
                raise
            rec.mark("")
            recent.after(k, out)
            if check is not None and pending is not None:
                check.after(pending, out, args)
            if backward:
                rec.watch_backward(rec.last_call, out)
            return out

        return call


def _fake(inputs) -> bool:
    """Whether a graph's inputs are traced ones (fake tensors: no values)."""
    from reprokit import compat

    return any(compat.is_fake(t) for t in inputs)
