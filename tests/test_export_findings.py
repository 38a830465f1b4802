"""Export-stage failures (issue #20, item 3): draft_export's report read into the verdict (the guard or constraint,
the user's line, the fix), packed; the module's source reduced to a verified repro.py; `reprokit minify RUN_DIR`
of export runs.

The end-to-end tests share one bisect run per case (module-scoped fixtures): real torch.export on CPU.
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

from reprokit.export.findings import export_finding
from tests.opt_in import opt_in

CASES = pathlib.Path(__file__).parent / "export_cases"
REPO = pathlib.Path(__file__).parent.parent

CONSTRAINT = """Traceback (most recent call last):
  File "<frozen runpy>", line 88, in _run_code
  File "/work/proj/serve.py", line 26, in <module>
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
torch._dynamo.exc.UserError: Constraints violated (batch)! For more information, run with TORCH_LOGS="+dynamic".
  - Not all values of batch = L['x'].size()[0] in the specified range batch <= 64 satisfy the generated guard \
2 <= L['x'].size()[0] and L['x'].size()[0] <= 16
Suggested fixes:
  batch = Dim('batch', max=16)

The error above occurred when calling torch.export.export.
"""
DRAFT = [
    {
        "type": "GUARD_ADDED",
        "expr": "s77 <= 16",
        "symbols": {"s77": "L['x'].size()[0]"},
        "op": None,
        "line": "serve.py:18",
        "code": "if x.shape[0] > 16:",
    }
]


def test_constraint_finding_takes_the_line_from_draft_export():
    """A constraint violation's traceback names only the export() call; draft_export's failure names the line
    that added the guard, and torch's suggested Dim range is part of the fix."""
    finding = export_finding(CONSTRAINT, "/work/proj/serve.py", DRAFT)
    assert finding["kind"] == "dynamic-shape constraint"
    assert finding["guard"] == "batch: 2 <= L['x'].size()[0] and L['x'].size()[0] <= 16 (declared range: batch <= 64)"
    assert (finding["line"], finding["code"]) == ("serve.py:18", "if x.shape[0] > 16:")
    assert finding["fix"].endswith("; torch suggests: batch = Dim('batch', max=16)"), finding["fix"]
    assert finding["draft"] == [
        {"type": "GUARD_ADDED", "expr": "s77 <= 16", "op": None, "line": "serve.py:18", "code": "if x.shape[0] > 16:"}
    ]
    # without draft_export the user's frame is still the export() call (a frame with no source line skipped)
    alone = export_finding(CONSTRAINT, "/work/proj/serve.py")
    assert (alone["line"], "draft" in alone) == ("serve.py:26", False)


UNBACKED = """Traceback (most recent call last):
  File "/work/proj/serve.py", line 30, in <module>
    ep = torch.export.export(model, (x,))
torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent expression \
u0 < 0 (unhinted: u0 < 0).  (Size-like symbols: none)
"""


def test_unbacked_size_gets_torch_check_and_missing_fake_kernel_its_own_fix():
    """A data-dependent value used as a size (not in a branch) is fixed by torch._check, not torch.cond; a custom
    op draft_export found without a fake kernel is named with the fake-kernel fix."""
    draft = [
        {
            "type": "DATA_DEPENDENT_ERROR",
            "expr": "u0 < 0",
            "symbols": {},
            "op": None,
            "line": "serve.py:12",
            "code": "return x.new_zeros(n.item())",
        }
    ]
    finding = export_finding(UNBACKED, "/work/proj/serve.py", draft)
    assert (finding["kind"], finding["guard"], finding["line"]) == ("unbacked size", "u0 < 0", "serve.py:12")
    assert finding["fix"].startswith("state what the size satisfies with torch._check(")
    missing = [
        {
            "type": "MISSING_FAKE_KERNEL",
            "expr": None,
            "symbols": {},
            "op": "mylib.scale.default",
            "line": None,
            "code": None,
        }
    ]
    finding = export_finding("RuntimeError: something failed while tracing", "/work/proj/serve.py", missing)
    assert finding["kind"] == "custom op without a usable fake kernel"
    assert finding["guard"] == "torch.ops.mylib.scale.default"
    assert finding["fix"].endswith("@torch.library.register_fake('mylib::scale')")
    # torch's own words, without draft_export: the op named from the error
    error = (
        "RuntimeError: no fake impl registered for <CustomOpDef(mylib::scale)>. This is necessary for "
        "torch.compile/export/fx tracing to work. Please use `scale.register_fake` to add an fake impl."
    )
    assert export_finding(error, "/work/proj/serve.py")["guard"] == "mylib::scale"


def reprokit(*args):
    """`reprokit ARGS` in this process: (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from reprokit.cli import main

    result = CliRunner().invoke(main, list(args), prog_name="reprokit", terminal_width=80)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    return result.exit_code, result.stdout, result.stderr


class Runs:
    """One bisect (--no-minify, packed) and one `reprokit minify` of it per case, shared by the module's tests."""

    def __init__(self, root: pathlib.Path):
        self.work = root / "project"
        shutil.copytree(CASES, self.work, ignore=shutil.ignore_patterns("__pycache__"))
        self.bisected: dict = {}
        self.minified: dict = {}

    def bisect(self, case: str) -> dict:
        if case not in self.bisected:
            cmd = [
                sys.executable,
                "-m",
                "reprokit",
                "bisect",
                case,
                "--json",
                "--no-minify",
                "-o",
                str(self.work / "artifacts"),
            ]
            p = subprocess.run(
                cmd,
                cwd=self.work,
                capture_output=True,
                text=True,
                timeout=900,
                env={**os.environ, "PYTHONPATH": str(REPO)},
            )
            assert p.returncode == 0, p.stderr
            self.bisected[case] = json.loads(p.stdout)
        return self.bisected[case]

    def minify(self, case: str) -> dict:
        if case not in self.minified:
            code, out, err = reprokit("minify", self.bisect(case)["run_dir"], "--json")
            assert code == 0, err
            self.minified[case] = json.loads(out)
        return self.minified[case]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("export_findings"))


def members(tarball: str) -> dict:
    with tarfile.open(tarball) as t:
        return {m.name.split("/", 1)[1]: t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile()}


@pytest.mark.slow
def test_constraint_violation_names_guard_line_and_dim_fix(runs):
    """A Dim range the model does not support: the verdict names the constraint, the line that added the guard
    (from draft_export: the error itself names only the export() call) and torch's suggested range; the pack holds
    draft_export's report and ISSUE.md says all of it."""
    data = runs.bisect("export_dim_constraint.py")
    assert (data["failing_stage"], data["last_passing_stage"]) == ("export", "none")
    finding = data["export"]
    assert finding["kind"] == "dynamic-shape constraint"
    assert finding["guard"] == ("batch: 2 <= L['x'].size()[0] and L['x'].size()[0] <= 16 (declared range: batch <= 64)")
    assert (finding["line"], finding["code"]) == ("export_dim_constraint.py:18", "if x.shape[0] > 16:")
    assert finding["fix"].endswith("torch suggests: batch = Dim('batch', max=16)"), finding["fix"]
    assert [(f["type"], f["line"]) for f in finding["draft"]] == [("GUARD_ADDED", "export_dim_constraint.py:18")]
    packed = members(data["tarball"])
    assert "Guard Added." in packed["draft_export.txt"] and "if x.shape[0] > 16:" in packed["draft_export.txt"]
    issue = packed["ISSUE.md"]
    assert issue.startswith("[torch.export] dynamic-shape constraint at export_dim_constraint.py:18: `batch: 2 <= "), (
        issue
    )
    assert "`torch.export.export` raises (UserError: Constraints violated (batch)!" in issue, issue
    for line in (
        "- torch.export fails: dynamic-shape constraint\n",
        "- guard or constraint that failed: `batch: 2 <= L['x'].size()[0] and L['x'].size()[0] <= 16 "
        "(declared range: batch <= 64)`\n",
        "- the line that added it: `export_dim_constraint.py:18`: `if x.shape[0] > 16:`\n",
        "- draft_export finds 1 problem: GUARD_ADDED at `export_dim_constraint.py:18`\n",
    ):
        assert line in issue, issue


@pytest.mark.slow
def test_data_dependent_branch_gets_draft_report_and_cond_fix(runs):
    """A branch on a tensor's value: the guard, the line, torch.cond as the fix; draft_export agrees (packed)."""
    data = runs.bisect("export_data_dependent.py")
    finding = data["export"]
    assert (finding["kind"], finding["guard"]) == ("data-dependent branch", "Eq(u0, 1)")
    assert (finding["line"], finding["code"]) == ("export_data_dependent.py:16", "if h.sum() > 0:")
    assert finding["fix"].startswith("branch with torch.cond(")
    assert finding["draft"] == [
        {
            "type": "DATA_DEPENDENT_ERROR",
            "expr": "Eq(u0, 1)",
            "op": None,
            "line": "export_data_dependent.py:16",
            "code": "if h.sum() > 0:",
        }
    ]
    assert "Data dependent error." in members(data["tarball"])["draft_export.txt"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, kept, guard",
    [
        (
            "export_dim_constraint.py",
            r"if x\.shape\[0\] > 16:",
            "satisfy the generated guard 2 <= L['x'].size()[0] and L['x'].size()[0] <= 16",
        ),
        # the branch on a value, whatever the tensor's name once `h = self.fc(x)` is cut to `x`
        ("export_data_dependent.py", r"if \w+\.sum\(\)", "Could not guard on data-dependent expression Eq(u0, 1)"),
    ],
)
def test_minify_reduces_the_source_of_an_export_failure(runs, case, kept, guard):
    """`reprokit minify RUN_DIR` of an export-stage failure reduces the script while export fails on the same
    guard: repro.py keeps the line that adds it, loses the rest, and fails so in a fresh interpreter."""
    v = runs.minify(case)
    assert (v["failing_stage"], v["repro_kind"], v["repro_verified"]) == ("export", "source", True), v
    assert v["nodes"]["unit"] == "lines" and v["nodes"]["minified"] < v["nodes"]["original"] / 2 + 1, v["nodes"]
    text = pathlib.Path(v["repro"]).read_text()
    assert re.search(kept, text) and "torch.export.export(" in text and "Linear" not in text, text
    p = subprocess.run([sys.executable, v["repro"]], capture_output=True, text=True, timeout=300, cwd=runs.work)
    assert p.returncode != 0 and guard in p.stderr, p.stderr[-2000:]


@pytest.mark.slow
@opt_in(
    "178 s in the suite at 110e4fd, CI over its 45 minutes): a source reduction of an export-stage "
    "failure is covered by test_minify_reduces_the_source_of_an_export_failure"
)
def test_minify_reduces_the_source_of_a_wrong_decomposition_at_decompose(runs):
    """The script's own decomposition table is wrong (gelu): decompose fails, with no guard to keep; repro.py keeps
    the table's entry and run_decompositions (the wrong body itself may be simplified to any other wrong one),
    and fails the script's check in a fresh interpreter."""
    v = runs.minify("wrong_decomposition.py")
    assert (v["failing_stage"], v["repro_kind"], v["repro_verified"]) == ("decompose", "source", True), v
    assert v["nodes"]["unit"] == "lines" and v["nodes"]["minified"] < v["nodes"]["original"], v["nodes"]
    text = pathlib.Path(v["repro"]).read_text()
    assert "table[torch.ops.aten.gelu.default] = my_gelu" in text and ".run_decompositions(table)" in text, text
    p = subprocess.run([sys.executable, v["repro"]], capture_output=True, text=True, timeout=300, cwd=runs.work)
    assert p.returncode != 0 and "Tensor-likes are not close" in p.stderr, p.stderr[-2000:]


@pytest.mark.slow
def test_minify_of_an_export_run_whose_script_changed_is_bad_input(runs):
    """The script bisected was edited since: its reduction would not be this failure's repro (one line, exit 2)."""
    run_dir = runs.bisect("export_dim_constraint.py")["run_dir"]
    script = runs.work / "export_dim_constraint.py"
    original = script.read_text()
    script.write_text(original + "# edited after the bisect\n")
    try:
        assert reprokit("minify", run_dir) == (
            2,
            "",
            "reprokit: not minified: export_dim_constraint.py changed since "
            "the bisect; run reprokit bisect on it again\n",
        )
    finally:
        script.write_text(original)


def test_issue_title_of_an_export_finding():
    """ISSUE.md's title of an export-stage failure names torch.export, the kind, the user's line and the guard."""
    from reprokit.data.verdict import Verdict
    from reprokit.report.triage import title

    v = Verdict.from_dict(
        dict(
            script="/work/proj/serve.py",
            argv=[],
            failing_stage="export",
            export=export_finding(CONSTRAINT, "/work/proj/serve.py", DRAFT),
        )
    )
    assert title(v) == (
        "[torch.export] dynamic-shape constraint at serve.py:18: `batch: 2 <= L['x'].size()[0] and "
        "L['x'].size()[0] <= 16 (declared range: batch <= 64)`"
    )


def test_a_candidate_that_reads_a_name_it_no_longer_binds_is_told_without_a_trial():
    """Source reduction skips candidates that would die of NameError: a deleted import, class or assignment whose
    name is still read. Arguments, except-names, comprehensions and builtins are bound; a star import or exec()
    may bind anything, so nothing is told there."""
    from reprokit.source.edits import unbound_names

    script = (CASES / "wrong_decomposition.py").read_text()
    assert unbound_names(script) == set()
    assert unbound_names(script.replace("import math\n", "")) == {"math"}
    assert unbound_names(script.replace("model = Block().eval()\n", "")) == {"model"}
    assert unbound_names(
        "def f(a, *b, c=1, **d):\n    return [i for i in b] + len(d) + z\n"
        "try:\n    f(1)\nexcept E as e:\n    print(e, __file__)\n"
    ) == {"z", "E"}
    assert unbound_names("from m import *\nprint(y)\n") == set()
    assert unbound_names("exec('y = 1')\nprint(y)\n") == set()


def test_a_candidate_keeps_the_scripts_seeding_calls():
    """A cut that drops torch.manual_seed(0) makes a failure that needed the seeded inputs a flaky one: #194347's
    19-line repro failed both checks and then passed 6 of 6 plain runs. Calls that seed torch's, Python's and
    NumPy's generators count; torch.seed() (a random seed) does not."""
    from reprokit.source.edits import seeds

    assert seeds("import torch\ntorch.manual_seed(0)\nx = torch.randn(8)\n") == 1
    assert (
        seeds(
            "import random, numpy as np, torch\nrandom.seed(1)\nnp.random.seed(2)\n"
            "torch.cuda.manual_seed_all(3)\ng = torch.Generator().manual_seed(4)\n"
        )
        == 4
    )
    assert seeds("import torch\ntorch.seed()\nx = torch.randn(8)\n") == 0


def test_a_slice_is_never_swapped_in_for_the_expression_around_it():
    """`dims[1:] + t` once gave `1: + t`, which no Python parses, and the reduction died on it (a held-out
    Dynamo-stage script, 67 lines, 4.5 minutes in). Each candidate parses; the slice's own parts still shrink."""
    import ast

    from reprokit.source.edits import simplify_candidates

    candidates = simplify_candidates("dims = (1, 2)\nnxt = dims[1:] + (dims[-1],)\n")
    assert all(ast.parse(c) for c in candidates)
    assert "dims = (1, 2)\nnxt = dims[1:]\n" in candidates
    assert "dims = (1, 2)\nnxt = dims[1] + (dims[-1],)\n" in candidates
    assert not any("1:" in c.replace("[1:]", "") for c in candidates)


def test_a_candidate_keeps_the_scripts_checks_and_graph_breaks():
    """A held-out Dynamo-stage script (#192872: an append lost across a graph break) was cut to a "verified" repro
    without its torch._dynamo.graph_break() and with `assert out_n == ref_n` made `assert out_n`: it failed the
    same way, of another bug. A cut may drop a check, never change one; the graph breaks stay."""
    from reprokit.source.edits import checks, graph_breaks

    script = (CASES.parent / "real_bugs" / "e_local_class_attr_graph_break.py").read_text()
    original = checks(script)
    assert graph_breaks(script) == 1 and sum(original.values()) >= 1
    weakened = checks(script.replace("assert out_n == ref_n", "assert out_n"))
    assert any(weakened[c] > original[c] for c in weakened)
    dropped = checks(
        script.replace("assert out_n == ref_n,", "print(out_n == ref_n,").replace('{ref_n}"\n', '{ref_n}")\n')
    )
    assert all(dropped[c] <= original[c] for c in dropped)
    assert graph_breaks(script.replace("torch._dynamo.graph_break()", "pass")) == 0
    guarded = checks("import sys\nif 'inplace' in str(e):\n    sys.exit(0)\nif x:\n    print(x)\n")
    assert list(guarded) == [checks("if 'inplace' in str(e):\n    raise SystemExit(0)\n").most_common(1)[0][0]]
