"""The source reduction's share of time (issue #32): when it runs out, the passes stop asking, the smallest script
so far that fails the same way is verified as repro.py, and the run says it is not minimal. In-process, on the
real compiler, with the share made zero (the default is max(240 s, 40 runs of the script))."""
import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from reprokit.app.bisect import bisect_script
from reprokit.source import reduce

CASES = pathlib.Path(__file__).parent / "cases"


def test_the_default_share_is_four_minutes_or_forty_runs_of_the_script():
    assert reduce.reduction_share(0.5) == 240.0 and reduce.reduction_share(30.0) == 1200.0


@pytest.mark.slow
def test_a_spent_share_ends_with_the_script_verified_and_says_it_is_not_minimal(tmp_path, monkeypatch):
    work = tmp_path / "project"
    work.mkdir()
    shutil.copy(CASES / "graph_break_fullgraph.py", work / "graph_break_fullgraph.py")
    monkeypatch.chdir(work)
    monkeypatch.setattr(reduce, "reduction_share", lambda seconds: 0.0)
    notes = []
    v = bisect_script(str(work / "graph_break_fullgraph.py"), output_dir=str(tmp_path / "artifacts"), pack=False,
                      configs=False, subsystems=False,
                      emit=lambda event, **d: notes.append(d["text"]) if event == "note" else None)
    said = ("the source reduction stopped at its share of time (0 s): repro.py is the smallest script so far that "
            "fails the same way, not a minimal one")
    assert said in notes and said in v.message, (notes, v.message)
    # Nothing was cut, and what was written still fails the same way in a fresh interpreter, and passes without
    # compile: a verified repro, though not a minimal one.
    assert v.repro_kind == "source" and v.repro_verified is True, v.message
    original = (work / "graph_break_fullgraph.py").read_text()
    assert pathlib.Path(v.repro).read_text() == ast.unparse(ast.parse(original)) + "\n"  # comments dropped, no cut
    candidates = [p for p in pathlib.Path(v.run_dir).glob("candidates/*.py")]
    assert len(candidates) == 1  # the script itself, asked once; no candidate after the share ran out
    p = subprocess.run([sys.executable, v.repro], capture_output=True, text=True, timeout=300,
                       env={k: x for k, x in os.environ.items() if k != "PYTHONPATH"})
    assert p.returncode != 0 and "Unsupported" in p.stderr, p.stderr[-2000:]
