"""Minify a graph inside the running script: the script's own check is the oracle.

When the captured graph passes alone (the script compares with its own tolerance, or the failure needs the
rest of the script), each candidate edit is compiled and spliced into graph k of a full script run, every other
node eager (child/router + child/splice). The script decides, exactly as it did for the original failure.
"""

from __future__ import annotations

import dataclasses

from reprokit.data.records import TrialSpec
from reprokit.fx.graphcase import Edit
from reprokit.minify.graph import GraphOracle


class ScriptOracle(GraphOracle):
    """Candidates judged by whole-script trials with graph k spliced (same target: the script's signature)."""

    def __init__(self, runner, shape, case, stage, target, base: TrialSpec):
        super().__init__(runner, shape, case, stage, target, check_accuracy=base.check_accuracy, run_backward=False)
        self.base = base

    def spec(self, edit: Edit) -> TrialSpec:
        return dataclasses.replace(
            self.base,
            save_graph=None,
            capture_backward=False,
            edit=edit.to_dict(),
            label=f"in-script-{self.shape.size(edit)}n",
        )
