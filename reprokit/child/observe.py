"""What doctor and `bisect --kind slow` observe in a script trial: each call of a compiled callable timed, the
graph breaks Dynamo logged, Dynamo's own metrics and counters."""

from __future__ import annotations

import functools
import os
import time

# What Dynamo did: graph breaks, recompilations, fall-backs (reprokit doctor, bisect --kind slow).
METRIC_FIELDS = (
    "compile_id",
    "co_name",
    "co_filename",
    "co_firstlineno",
    "fail_type",
    "fail_reason",
    "fail_user_frame_filename",
    "fail_user_frame_lineno",
    "recompile_reason",
    "graph_op_count",
    "entire_frame_compile_time_s",
    "config_suppress_errors",
    "has_guarded_code",
)


class Observer:
    """Timings per compiled callable and graph breaks, gathered while the script runs."""

    def __init__(self):
        self.callables: list[dict] = []
        self.breaks: list[dict] = []
        self.breaks_attached = True  # False: this torch has no graph-break hook reprokit knows
        self._depth = 0

    def watch_breaks(self) -> None:
        """Record every graph break Dynamo logs from now on."""
        from reprokit import compat

        self.breaks_attached = compat.watch_graph_breaks(self._record_break)

    def _record_break(self, exc, reason: str, stack, code) -> None:
        """One graph break as plain data: {gb_type, reason, exc_type, stack: [(file, line, function, code)], frame}."""
        self.breaks.append(
            {
                "gb_type": getattr(exc, "gb_type", None) or type(exc).__name__,
                "reason": reason,
                "exc_type": type(exc).__name__ if exc else None,
                "stack": [(f.filename, f.lineno, f.name, (f.line or "").strip()) for f in stack],
                "frame": (code.co_filename, code.co_firstlineno, code.co_name),
            }
        )

    def timed(self, compiled, original, site, counts=None):
        """The compiled callable, timing each outermost call and noting whether it compiled anything; counts:
        the graphs and ops its router compiled ({"graphs", "ops"}, updated as it compiles)."""
        import torch

        owner = getattr(original, "__self__", original)  # model.compile() hands torch.compile a bound method
        label = (
            type(owner).__name__
            if isinstance(owner, torch.nn.Module)
            else getattr(original, "__qualname__", repr(original))
        )
        record = {
            "label": label,
            "site": site,
            "seconds": [],
            "compiled": [],
            "counts": counts if counts is not None else {},
        }
        self.callables.append(record)
        if isinstance(compiled, torch.nn.Module):
            inner = compiled.forward
            compiled.forward = lambda *a, **k: self._call(record, inner, *a, **k)
            return compiled

        @functools.wraps(compiled)
        def timed_fn(*args, **kwargs):
            return self._call(record, compiled, *args, **kwargs)

        return timed_fn

    def _call(self, record, fn, *args, **kwargs):
        import torch

        from reprokit import compat

        if self._depth:  # a compiled callable calling another: only the outermost is timed
            return fn(*args, **kwargs)
        self._depth += 1
        frames = compat.frames_compiled()
        sync = torch.cuda.synchronize if torch.cuda.is_available() and torch.cuda.is_initialized() else None
        try:
            if sync:
                sync()
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            if sync:
                sync()
            record["seconds"].append(time.perf_counter() - t0)
            record["compiled"].append(compat.frames_compiled() != frames)
            return out
        finally:
            self._depth -= 1

    def observations(self) -> dict:
        """Everything observed, as plain data (observed.json)."""
        from reprokit import compat

        metrics = plain_metrics(compat.compilation_metrics())
        unattached = [
            name
            for name, ok in (("graph-break", self.breaks_attached), ("compile-metrics", metrics is not None))
            if not ok
        ]
        return {
            "callables": self.callables,
            "breaks": self.breaks,
            "metrics": metrics or [],
            "counters": compat.dynamo_counters(),
            "recompile_limit": compat.recompile_limit(),
            "unattached": unattached,
        }


def plain_metrics(records: list | None) -> list | None:
    """A plain dict of METRIC_FIELDS per frame Dynamo compiled (a set as a sorted list); None where torch kept none."""
    if records is None:
        return None
    return [
        {k: (sorted(v) if isinstance(v, set) else v) for k in METRIC_FIELDS for v in [getattr(m, k, None)]}
        for m in records
    ]


def user_frame(frame) -> list | None:
    """[file, line] of the innermost caller outside torch and reprokit: where the user called torch.compile."""
    import torch

    skip = (
        os.path.dirname(os.path.abspath(torch.__file__)),
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(skip) and not frame.f_code.co_filename.startswith("<"):
            return [frame.f_code.co_filename, frame.f_lineno]
        frame = frame.f_back
    return None
