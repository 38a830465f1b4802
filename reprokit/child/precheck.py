"""The fake-tensor check of graph cuts (issue #32): a long-lived process that runs each edit of a captured graph
on fake tensors (shapes, strides and dtypes, no data, no compile), so that a cut which cannot run at all is refused
before a trial is spent on it.

    python -m reprokit.child.precheck CASE_DIR

Its first line says whether it can check this graph: {"ready": true}, or {"ready": false, "why": ...} when the whole
graph does not run on fake tensors itself (then no cut may be judged by them). Then, for each edit read from stdin
(one JSON line), one line: {"ok": true} or {"ok": false, "why": "<the error>"}.
"""

from __future__ import annotations

import json
import sys


def _fake_inputs(mode, metas: list) -> list:
    """The graph's inputs as fakes made from their recorded metadata: no values are loaded or synthesised (a 40B
    model's captured weights cost nothing here)."""
    import torch

    out = []
    with mode:
        for m in metas:
            if m["kind"] != "tensor":
                out.append(m.get("value"))
                continue
            dtype = getattr(torch, m["dtype"])
            t = torch.empty_strided(m["shape"], m["stride"], dtype=dtype, device=m.get("device", "cpu"))
            out.append(t.requires_grad_(bool(m.get("requires_grad"))) if t.is_floating_point() else t)
    return out


def _fresh(mode, value):
    """A new fake like `value` (same shape, strides, dtype, requires_grad; no autograd history), as a trial feeds a
    cut node's eager value: a detached copy (materialize._detached). A new one per check: an edit's in-place ops
    must not change what the next edit is given."""
    import torch

    if not isinstance(value, torch.Tensor):
        return value
    with mode:
        t = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device=value.device)
    return t.requires_grad_(bool(value.requires_grad) and t.is_floating_point())


class Checker:
    """The case loaded once; check(edit) runs one edit on fakes."""

    def __init__(self, case_dir: str):
        from reprokit import compat
        from reprokit.child.graph import run_prelude
        from reprokit.fx import serialize

        run_prelude(case_dir)  # before loading: the graph may call ops the prelude registers
        with open(f"{case_dir}/meta.json") as f:
            meta = json.load(f)
        self.gm = serialize.load(f"{case_dir}/graph.pt")
        self.ctx = meta.get("context")
        self.mode = compat.fake_tensor_mode()
        self.inputs = _fake_inputs(self.mode, meta["inputs"])
        # Every node's value on fakes, as the cut nodes' stand-ins; the whole graph must run so (else: not ready).
        self.values = self._run(self.gm, [_fresh(self.mode, x) for x in self.inputs])

    def _run(self, gm, inputs: list) -> dict:
        """Every node's value, the graph run on fakes in the call-time context."""
        from reprokit.child import context
        from reprokit.fx.capture import node_values

        with self.mode, context.replay(self.ctx):
            return node_values(gm, inputs)

    def check(self, edit: dict) -> None:
        """Raises what the edited graph raises on fakes."""
        from reprokit.fx.materialize import build

        cut = {name: _fresh(self.mode, self.values[name]) for name in edit["cut"]}
        gm, inputs = build(self.gm, [_fresh(self.mode, x) for x in self.inputs], edit, cut_values=cut)
        self._run(gm, inputs)


def _why(e: BaseException) -> str:
    first = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {first}"[:300]


def main(case_dir: str) -> None:
    try:
        checker = Checker(case_dir)
    except Exception as e:  # any failure: no cut is judged on fakes, every one gets its trial
        print(json.dumps({"ready": False, "why": _why(e)}), flush=True)
        return
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        try:
            checker.check(json.loads(line))
            reply: dict[str, bool | str] = {"ok": True}
        except Exception as e:
            reply = {"ok": False, "why": _why(e)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
