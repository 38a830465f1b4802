"""In place, the original run is the accuracy capture too (issue 46 item 4): a script whose own check finds wrong
numbers is bisected by graph trials on the graph that diverges as of its recent call, not by runs of the script."""

import json
import os
import pathlib

import pytest
from issue_checks import check_issue
from test_e2e import CASES, bisect, check_repro, check_verdict, expect  # noqa: F401 (CASES: the workdir fixture copies it)


def script_runs(run_dir: str) -> list:
    """The labels of the journal's runs of the user's script (repro.py's own runs are not the script's)."""
    journal = [json.loads(line) for line in pathlib.Path(run_dir, "journal.jsonl").read_text().splitlines()]
    return [
        r["label"] for r in journal if r["kind"] == "script" and os.path.basename(r["spec"]["script"]) != "repro.py"
    ]


@pytest.mark.slow
def test_a_wrong_evaluation_found_by_the_scripts_own_check_runs_the_script_three_times(workdir):
    exp = expect("relu_wrong_exit.py")
    p, data = bisect(workdir, "relu_wrong_exit.py", "--no-configs", "--no-pack")
    assert p.returncode == 0, p.stderr
    check_verdict(data, exp)
    assert data["signature"]["cause"].startswith("mismatch"), data["signature"]
    assert data["subsystem"]["name"] == "lowerings" and "aten.relu" in data["subsystem"]["detail"], data["subsystem"]
    check_repro(data, exp)
    # The baseline, the original, and one confirmation after the repro: which graph, the stages, the counters and
    # minify were graph trials on the evaluation's graph as the original run saved it at its latest call.
    assert script_runs(data["run_dir"]) == ["baseline-no-compile", "original", "graph-confirm"]
    assert data["graph_confirmed"] is True
    assert [r["stage"] for r in data["ladder"]] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    # An accuracy repro's decisive error is its own check's, as `python repro.py` prints it (issue 46).
    check_issue(
        data["run_dir"],
        "Tensor-likes are not close!",
        "[inductor][cpu] aten.relu lowering: the script's own check fails",
        ("module: inductor",),
    )
