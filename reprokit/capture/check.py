"""`reprokit capture --check-accuracy`: for a job with no check of its own (a loss that drifts), each compiled
graph's first calls also run eagerly, and in float64, on copies of their inputs, judged by the bisect's own rule
(child/accuracy: torch's `same` at its tolerance, compiled being the closer one to float64 is no bug), plus NaN or
Inf where eager has none. The first graph that diverges is written out as the failure, with its real inputs under
the cap, as a graph that raises is. The job goes on as it would have, its numbers untouched (the eager runs are on
copies, their random draws forked off the job's stream); the checks end with that first divergence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reprokit.child.accuracy import Reference

DEFAULT_CALLS = 2  # as the bisect's router checks each graph's first two calls


@dataclass
class CheckState:
    """What the checks of one process found: calls checked, the graph that diverged, and the graphs left alone."""

    calls: int  # the first calls of each graph checked
    checked: int = 0
    diverged: int | None = None
    more_accurate: list = field(default_factory=list)  # compiled closer to float64 than eager: not flagged
    random: list = field(default_factory=list)  # graphs with random ops: compiled draws its own numbers
    eager_failed: list = field(default_factory=list)  # eager itself raised on the copies

    def summary(self) -> dict:
        """This process's check, for its line in capture.json."""
        return {
            "check_calls": self.calls,
            "checked_calls": self.checked,
            "diverged": self.diverged,
            "more_accurate": self.more_accurate,
            "not_checked": {"random": self.random, "eager_failed": self.eager_failed},
        }


@dataclass
class Pending:
    """One checked call between its eager run and its compiled one: eager's side, and the inputs as they were."""

    reference: Reference
    inputs: list
    call: int


class GraphCheck:
    """The check of one compiled graph: its first `calls` calls, each compared with eager."""

    def __init__(self, rec, k: int, gm, ctx, compile_args):
        from reprokit.fx.random_ops import draws_random

        self.rec, self.k, self.gm, self.ctx, self.compile_args = rec, k, gm, ctx, compile_args
        self.calls = 0
        self.random = draws_random(gm)

    def before(self, args) -> Pending | None:
        """Eager's side of this call when it is checked (before the compiled call: a graph may mutate its inputs);
        never raises (the check is lost, the job is not)."""
        try:
            return self._before(args)
        except Exception as e:
            _lost(self.k, e)
            return None

    def after(self, pending: Pending, out, args) -> None:
        """Judge the compiled call against eager; the first divergence is written out as the failure."""
        try:
            self._after(pending, out, args)
        except Exception as e:
            _lost(self.k, e)

    def _before(self, args) -> Pending | None:
        from reprokit.child.accuracy import copies, eager_reference

        state: CheckState = self.rec.check
        self.calls += 1
        if self.rec.failed or self.calls > state.calls:
            return None
        if self.random:  # compiled draws its own random numbers (unless fallback_random): eager's differ anyway
            _note(state.random, self.k)
            return None
        reference = eager_reference(self.gm, args)
        if reference is None:
            _note(state.eager_failed, self.k)
            return None
        # eager wrote into its copies: the compiled call will write into the job's, so the inputs to save are copied
        inputs = copies(args, keep_grad=True) if reference.mutated else list(args)
        return Pending(reference, inputs, self.calls)

    def _after(self, pending: Pending, out, args) -> None:
        from reprokit import compat
        from reprokit.child.accuracy import MORE_ACCURATE, compiled_more_accurate, measure, verdict

        state: CheckState = self.rec.check
        state.checked += 1
        with compat.same_quietly():
            found = measure(pending.reference, out, args)
        mismatch, note = verdict(found)
        mismatch = nonfinite(pending.reference, out) or mismatch
        if not mismatch and (note == MORE_ACCURATE or compiled_more_accurate(found)):
            _note(state.more_accurate, self.k)
        if mismatch and not self.rec.failed:
            self.diverged(pending, mismatch, found)

    def diverged(self, pending: Pending, mismatch: str, found: list) -> None:
        """Graph k written out as the job's failure (kind accuracy), its measures beside failure.json."""
        import os

        from reprokit.capture import files
        from reprokit.child.accuracy import AccuracyFailure, write_measures

        self.rec.check.diverged = self.k
        failure = AccuracyFailure(f"graph {self.k}: {mismatch}")
        check = {"check": record(pending.call, mismatch, found)}
        self.rec.failed_at(self.k, self.gm, pending.inputs, self.ctx, self.compile_args, failure, "run", check)
        try:
            write_measures(os.path.join(files.rank_dir(self.rec.root, self.rec.rank), files.ACCURACY), found)
        except OSError:
            pass  # failure.json holds what diverged; the full measures are a detail


def record(call: int, mismatch: str, found: list) -> dict:
    """failure.json's `check`: which call diverged, the mismatch, the tolerance, and each output beyond it."""
    from reprokit.child.accuracy import TOL, judge

    keys = ("name", "dtype", "shape", "max_abs", "max_rel", "compiled_vs_fp64", "eager_vs_fp64", "problem")
    return {
        "call": call,
        "mismatch": mismatch,
        "tolerance": TOL,
        "diverged": [{k: m.get(k) for k in keys} for m in found if judge([m])],
    }


def nonfinite(reference, out) -> str | None:
    """The first output with NaN or Inf where eager's has none (the elements eager never wrote left out)."""
    import torch

    from reprokit.child.accuracy import as_list
    from reprokit.child.unwritten import hide

    unwritten = reference.unwritten or []
    for i, (r, o) in enumerate(zip(as_list(reference.outputs), as_list(out))):
        if not (isinstance(r, torch.Tensor) and isinstance(o, torch.Tensor)) or r.shape != o.shape:
            continue
        if not (o.is_floating_point() or o.is_complex()):
            continue
        if i < len(unwritten):
            r, o, _ = hide(unwritten[i], r, o, None)
        bad = int((~torch.isfinite(o.detach()) & torch.isfinite(r.detach())).sum())
        if bad:
            return f"output {i}: {bad} of {o.numel()} elements NaN or Inf where eager has none"
    return None


def _note(graphs: list, k: int) -> None:
    if k not in graphs:
        graphs.append(k)


def _lost(k: int, e: Exception) -> None:
    import sys

    print(f"reprokit capture: graph {k} not checked against eager: {type(e).__name__}: {e}", file=sys.stderr)
