"""Export-stage failures (issue #20, item 3): draft_export's report read into the verdict (the guard or constraint,
the user's line, the fix), packed; the module's source reduced to a verified repro.py; `reprokit minify RUN_DIR`
of export runs.

The end-to-end tests share one bisect run per case (module-scoped fixtures): real torch.export on CPU.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile

import pytest

from reprokit.export.findings import export_finding

CASES = pathlib.Path(__file__).parent / "export_cases"
REPO = pathlib.Path(__file__).parent.parent

CONSTRAINT = '''Traceback (most recent call last):
  File "<frozen runpy>", line 88, in _run_code
  File "/work/proj/serve.py", line 26, in <module>
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
torch._dynamo.exc.UserError: Constraints violated (batch)! For more information, run with TORCH_LOGS="+dynamic".
  - Not all values of batch = L['x'].size()[0] in the specified range batch <= 64 satisfy the generated guard \
2 <= L['x'].size()[0] and L['x'].size()[0] <= 16
Suggested fixes:
  batch = Dim('batch', max=16)

The error above occurred when calling torch.export.export.
'''
DRAFT = [{"type": "GUARD_ADDED", "expr": "s77 <= 16", "symbols": {"s77": "L['x'].size()[0]"}, "op": None,
          "line": "serve.py:18", "code": "if x.shape[0] > 16:"}]


def test_constraint_finding_takes_the_line_from_draft_export():
    """A constraint violation's traceback names only the export() call; draft_export's failure names the line
    that added the guard, and torch's suggested Dim range is part of the fix."""
    finding = export_finding(CONSTRAINT, "/work/proj/serve.py", DRAFT)
    assert finding["kind"] == "dynamic-shape constraint"
    assert finding["guard"] == "batch: 2 <= L['x'].size()[0] and L['x'].size()[0] <= 16 (declared range: batch <= 64)"
    assert (finding["line"], finding["code"]) == ("serve.py:18", "if x.shape[0] > 16:")
    assert finding["fix"].endswith("; torch suggests: batch = Dim('batch', max=16)"), finding["fix"]
    assert finding["draft"] == [{"type": "GUARD_ADDED", "expr": "s77 <= 16", "op": None, "line": "serve.py:18",
                                 "code": "if x.shape[0] > 16:"}]
    # without draft_export the user's frame is still the export() call (a frame with no source line skipped)
    alone = export_finding(CONSTRAINT, "/work/proj/serve.py")
    assert (alone["line"], "draft" in alone) == ("serve.py:26", False)


UNBACKED = '''Traceback (most recent call last):
  File "/work/proj/serve.py", line 30, in <module>
    ep = torch.export.export(model, (x,))
torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression \
u0 < 0 (unhinted: u0 < 0).  (Size-like symbols: none)
'''


def test_unbacked_size_gets_torch_check_and_missing_fake_kernel_its_own_fix():
    """A data-dependent value used as a size (not in a branch) is fixed by torch._check, not torch.cond; a custom
    op draft_export found without a fake kernel is named with the fake-kernel fix."""
    draft = [{"type": "DATA_DEPENDENT_ERROR", "expr": "u0 < 0", "symbols": {}, "op": None, "line": "serve.py:12",
              "code": "return x.new_zeros(n.item())"}]
    finding = export_finding(UNBACKED, "/work/proj/serve.py", draft)
    assert (finding["kind"], finding["guard"], finding["line"]) == ("unbacked size", "u0 < 0", "serve.py:12")
    assert finding["fix"].startswith("state what the size satisfies with torch._check(")
    missing = [{"type": "MISSING_FAKE_KERNEL", "expr": None, "symbols": {}, "op": "mylib.scale.default",
                "line": None, "code": None}]
    finding = export_finding("RuntimeError: something failed while tracing", "/work/proj/serve.py", missing)
    assert finding["kind"] == "custom op without a usable fake kernel"
    assert finding["guard"] == "torch.ops.mylib.scale.default"
    assert "@torch.library.register_fake" in finding["fix"]
