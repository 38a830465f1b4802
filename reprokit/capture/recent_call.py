"""The latest call of each compiled graph, kept in memory so that a job ending in error with no exception from
torch (its own check, an assert, a NaN guard, sys.exit(1)) leaves, per graph, what asking it compiled against
eager needs: its inputs and a summary of its outputs. A passing job pays only the keeping; nothing is written.

How a call is kept (RecentCalls.before/after, on every compiled call):
- inputs under the cap (their bytes at compile, max_input_bytes): references, no copy. The first call is copied
  before it runs and its inputs' version counters read after: a graph that wrote into an input is copied before
  every later call (a reference would hold the values after the write); one that did not keeps references from
  then on. Values a job changes later in place (an optimizer's step on parameters) are written as they are then.
- inputs over the cap: weak references (an activation is not kept alive): to the parameters once, as the graph
  compiled (the same objects every call), to the other tensors at each call; at write, a tensor gone is a stand-in
  matched on shape, dtype, stride and range as recorded at compile (fx/inputs.synthetic_inputs).
- outputs: references, detached where they require grad (the job's autograd graph is not kept alive), weakly
  over the cap; summarised at write only.

API (also for the in-place original run): compiled(k, gm, example_inputs, context, compile_args) once
per graph, before(k, args) and after(k, out) around each call, write(folder, script) -> graphs written, each as a
case folder (fx/capture) calls/g<k>/ with outputs.json beside its meta.json.
"""

from __future__ import annotations

import dataclasses
import os
import weakref
from typing import Any

from reprokit.capture.files import CALLS

OUTPUTS = "outputs.json"  # in each: the outputs' shape, dtype and value statistics
STATS_MAX_BYTES = 16 << 20  # range of an over-cap input recorded at compile, as written ahead (capture/crash)


@dataclasses.dataclass
class _Graph:
    gm: Any
    context: Any
    compile_args: Any
    over_cap: bool
    meta: list  # per input at compile: over the cap, its shape, stride, dtype and range (else [])
    params: dict = dataclasses.field(default_factory=dict)  # over the cap: {position: weak reference} of parameters
    others: list = dataclasses.field(default_factory=list)  # over the cap: the other positions, kept at each call
    copy: bool | None = None  # None until the first call shows whether the graph writes into its inputs
    args: tuple | None = None
    pending: tuple | None = None  # the first call: (its arguments, their version counters)
    outputs: Any = None
    calls: int = 0


class RecentCalls:
    """The latest call of each compiled graph of one process, by graph index."""

    def __init__(self, max_input_bytes: int):
        self.max_input_bytes = max_input_bytes
        self.graphs: dict[int, _Graph] = {}

    def compiled(self, k: int, gm, example_inputs, context, compile_args) -> None:
        """Graph k compiled: how its calls are kept, from its inputs' size."""
        _safely(self, k, self._compiled, k, gm, example_inputs, context, compile_args)

    def before(self, k: int, args) -> None:
        """Keep call args of graph k (before it runs: a copy taken after would hold what the graph wrote)."""
        _safely(self, k, self._before, k, args)

    def after(self, k: int, out) -> None:
        """Keep the outputs of graph k's call; after its first call, decide how later ones are kept."""
        _safely(self, k, self._after, k, out)

    def _compiled(self, k: int, gm, example_inputs, context, compile_args) -> None:
        from reprokit.fx.capture import tensor_meta

        inputs = list(example_inputs)
        size = sum(t.numel() * t.element_size() for t in inputs if hasattr(t, "element_size"))
        over = size > self.max_input_bytes
        meta = [tensor_meta(t, STATS_MAX_BYTES) for t in inputs] if over else []
        g = self.graphs[k] = _Graph(gm, context, compile_args, over, meta)
        if over:
            g.params = {i: weakref.ref(t) for i, t in enumerate(inputs) if _parameter(t)}
            g.others = [i for i in range(len(inputs)) if i not in g.params]

    def _before(self, k: int, args) -> None:
        g = self.graphs.get(k)
        if g is None:
            return
        g.calls += 1
        if g.over_cap:  # a weak reference costs ~1 us: the parameters' were taken once, at compile
            g.args = tuple(weakref.ref(a) if _tensor(a) else a for a in map(args.__getitem__, g.others))
        elif g.copy is None:
            g.args = _copies(args)
            g.pending = (args, [a._version if _tensor(a) else None for a in args])
        elif g.copy:
            g.args = _copies(args)
        else:
            g.args = args

    def _after(self, k: int, out) -> None:
        g = self.graphs.get(k)
        if g is None:
            return
        if g.pending is not None:
            args, versions = g.pending
            g.pending = None
            g.copy = any(v is not None and a._version != v for a, v in zip(args, versions))
            if not g.copy:
                g.args = args  # the copy is dropped: references from now on
        flat = out if isinstance(out, (list, tuple)) else (out,)
        if g.over_cap:
            g.outputs = tuple(weakref.ref(o) if _tensor(o) else o for o in flat)
        else:
            # detached where autograd tracks them (a reference would keep the job's autograd graph alive)
            g.outputs = tuple(o.detach() if getattr(o, "requires_grad", False) else o for o in flat)

    def kept(self) -> list:
        """The graphs with a call kept."""
        return sorted(k for k, g in self.graphs.items() if g.args is not None)

    def write(self, folder: str, script: str | None, process_group: dict | None = None) -> list:
        """Each kept call as folder/calls/g<k>/ (a case folder and outputs.json); the graphs written. A graph that
        cannot be written is skipped with one line on stderr (the job's own failure is what the user sees).
        process_group: the job's as it compiled (a job may destroy it before it exits: fx/collectives)."""
        import sys

        written = []
        for k in self.kept():
            try:
                self._write_one(k, os.path.join(folder, CALLS, f"g{k}"), script, process_group)
                written.append(k)
            except Exception as e:
                print(
                    f"reprokit capture: graph {k}'s latest call not written: {type(e).__name__}: {e}", file=sys.stderr
                )
        return written

    def _write_one(self, k: int, case: str, script: str | None, process_group: dict | None) -> None:
        from reprokit.data.rundir import write_json_atomic
        from reprokit.fx.capture import capture_graph

        g = self.graphs[k]
        args = g.args or ()
        if g.over_cap:  # the parameters' references, and the others' of the latest call, in the graph's order
            kept = dict(zip(g.others, args))
            args = tuple(g.params[i] if i in g.params else kept[i] for i in range(len(g.meta)))
        inputs = _alive(args, g.meta)
        capture_graph(
            g.gm,
            inputs,
            case,
            max_input_bytes=self.max_input_bytes,
            compile_args=g.compile_args,
            script=script,
            context=g.context,
            run_eagerly=False,  # no eager run at exit: a collective in it would wait for ranks that are gone
            process_group=process_group,
        )
        outputs = [_summary(o() if isinstance(o, weakref.ref) else o) for o in g.outputs or ()]
        write_json_atomic(os.path.join(case, OUTPUTS), {"calls": g.calls, "outputs": outputs})


def _safely(calls: RecentCalls, k: int, fn, *args) -> None:
    """fn(*args); what it raises is never the job's: graph k's calls are no longer kept, said in one line."""
    try:
        fn(*args)
    except Exception as e:
        import sys

        calls.graphs.pop(k, None)
        print(f"reprokit capture: graph {k}'s calls not kept: {type(e).__name__}: {e}", file=sys.stderr)


def _parameter(t) -> bool:
    import torch

    return isinstance(t, torch.nn.Parameter)


def _tensor(a) -> bool:
    return hasattr(a, "_version") and hasattr(a, "shape")


def _copies(args) -> tuple:
    """Copies of the tensors in args (sharing memory where the originals do), requiring grad as they do: the
    accuracy check's own copies (child/accuracy), which --check-accuracy takes of the same calls."""
    from reprokit.child.accuracy import copies

    return tuple(copies(args, keep_grad=True))


def _alive(args: tuple, meta: list) -> list:
    """The kept arguments; a tensor no longer alive replaced by a stand-in made from its meta at compile (shape,
    stride, dtype, range: fx/inputs), on its device."""
    from reprokit.fx.inputs import synthetic_inputs

    out = []
    for i, a in enumerate(args):
        value = a() if isinstance(a, weakref.ref) else a
        if value is None and i < len(meta):
            value = synthetic_inputs([meta[i]])[0]
        out.append(value)
    return out


def _summary(o) -> dict:
    """One output of the kept call: shape, dtype and value statistics (None: no longer alive)."""
    from reprokit.fx.capture import tensor_meta

    if o is None:
        return {"kind": "gone"}
    return tensor_meta(o, STATS_MAX_BYTES)
