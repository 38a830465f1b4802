"""Each compiled graph's most recent call, kept by the original run (spec.capture_failing): when the script's own
check then finds a mismatch, no graph raised, so none was saved as it failed; each graph is written out as of its
last call instead, and the bisect checks them, compiled against eager, to find the one that diverges
(bisect/captured.py)."""

from __future__ import annotations

import os

from reprokit.data.trial_files import RECENT_CALLS


class RecentCalls:
    """Graph k's module, last call's inputs (references: no copy, so a call costs a dict store) and call-time
    context; a graph whose inputs exceed the cap is not kept (it would hold that memory alive)."""

    def __init__(self, max_input_bytes: int):
        self.max_input_bytes = max_input_bytes
        self.calls: dict[int, tuple] = {}
        self.too_big: set[int] = set()

    def keep(self, k: int, gm, args, ctx: dict) -> None:
        if k in self.too_big:
            return
        if k not in self.calls and _bytes(args) > self.max_input_bytes:
            self.too_big.add(k)
            return
        self.calls[k] = (gm, args, ctx)

    def write(self, trial_dir: str, compile_args, script: str | None) -> str:
        """Every kept graph as a case folder, trial_dir/recent_calls/g<k>; what could not be written, said."""
        from reprokit.fx.capture import capture_graph

        skipped = [f"graph {k}: inputs over the cap" for k in sorted(self.too_big)]
        for k, (gm, args, ctx) in sorted(self.calls.items()):
            try:
                capture_graph(
                    gm,
                    list(args),
                    os.path.join(trial_dir, RECENT_CALLS, f"g{k}"),
                    max_input_bytes=self.max_input_bytes,
                    compile_args=compile_args,
                    script=script,
                    context=ctx,
                )
            except Exception as e:  # the original's answer stands without it: the bisect asks the script
                skipped.append(f"graph {k}: {type(e).__name__}")
        return f"recent calls not saved ({', '.join(skipped)})" if skipped else ""


def _bytes(args) -> int:
    import torch

    return sum(a.numel() * a.element_size() for a in args if isinstance(a, torch.Tensor))
