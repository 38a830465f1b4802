"""Issue 46 items 5 and 7 as a user reads them: numerics-only or a wrong lowering (inductor's numerics modes), the
workaround line, compiled the more accurate one (exit 4, one line), and the first diverging node beside the lowering
counter's answer. Fast: the sentences from recorded answers, the CLI with a finished verdict; nothing is compiled
(test_e2e's fp8 case runs it all for real)."""

from click.testing import CliRunner

from reprokit.app import bisect as bisect_case
from reprokit.bisect.numerics import FALLBACK, agreement, base_name, mode_configs, numerics_finding
from reprokit.cli import main
from reprokit.data.verdict import Verdict
from reprokit.report.issue_notes import isolated_lines
from reprokit.report.numerics_notes import numerics_lines

LOWERING = {
    "name": "lowerings",
    "application": 7,
    "applications": 8,
    "detail": "prims.convert_element_type.default (%convert_element_type_2 : ...)",
}
NODE = {
    "node": "scale_1",
    "target": "to",
    "code": "%scale_1 : [num_users=1] = call_method[target=to](args = (%scale, torch.float32), kwargs = {})",
    "index": 5,
    "of": 5,
    "level": "tolerance",
    "eager": 96.0,
    "compiled": 96.21476745605469,
}


def test_a_torch_without_numerics_modes_says_they_were_not_asked():
    assert mode_configs({"torch": "2.13.0", "fallback_by_default": False}) == {}  # no trial: the counters tell
    found = numerics_finding("2.13.0", {})
    assert (found["cause"], found["workaround"]) == (None, None)
    assert found["text"] == "numerics modes not asked: torch 2.13.0 has no TORCHINDUCTOR_NUMERICS"


def test_strict_numerics_removing_it_is_numerics_only_and_the_weakest_mode_is_the_workaround():
    """torch 2.15's modes, as its run of the fp8 case answered them (strict_reduction keeps float32 there)."""
    have = {"torch": "2.15.0", "numerics": "default", "fallback_by_default": False}
    assert list(mode_configs(have)) == ["strict_pointwise", "strict_reduction", "strict", FALLBACK]
    passed = {"strict_pointwise": True, "strict_reduction": False, "strict": True, FALLBACK: True}
    found = numerics_finding("2.15.0", passed)
    assert (found["cause"], found["workaround"]) == ("numerics", "TORCHINDUCTOR_NUMERICS=strict_pointwise")
    assert found["text"] == (
        "numerics-only: TORCHINDUCTOR_NUMERICS=strict_pointwise removes the difference: it comes from reordering "
        "or precision; inductor's fallback to ATen (fallback_by_default=True) removes it"
    )
    v = Verdict.from_dict(dict(script="fp8.py", argv=[], numerics=found))
    assert isolated_lines(v, numerics_lines(v))[-1] == (
        "workaround: `TORCHINDUCTOR_NUMERICS=strict_pointwise` (the weakest numerics mode that removes it)"
    )


def test_strict_numerics_not_removing_it_is_a_wrong_lowering():
    found = numerics_finding("2.15.0", {"strict_pointwise": False, "strict_reduction": False, "strict": False})
    assert (found["cause"], found["workaround"]) == ("lowering", None)
    assert found["text"] == (
        "the lowering is wrong: strict numerics (TORCHINDUCTOR_NUMERICS=strict) does not remove the difference"
    )


def test_the_first_diverging_node_is_held_against_the_lowering_counter():
    assert base_name("prims.convert_element_type.default") == "convert_element_type"
    assert base_name("aten.add.Tensor") == "add" and base_name("aten.relu.default") == "relu"
    assert agreement(NODE, LOWERING) == "agrees"  # a cast is `to` in Dynamo's graph
    assert agreement({**NODE, "target": "aten.relu.default"}, LOWERING) == "differs"
    assert agreement(NODE, {"name": "post_grad_passes", "detail": "x"}) is None
    # relu_accuracy on torch 2.15: relu as an output of its own agrees (lowered with addmm otherwise); the first
    # node that differs is the mul it feeds, whose kernel computes relu with the planted bug
    mul = {"node": "h_1", "target": "_operator.mul", "feeds": ["torch.relu", "torch.sigmoid"]}
    relu = {**LOWERING, "detail": "aten.relu.default (%relu : ...)", "application": 9, "applications": 78}
    assert agreement(mul, relu) == "feeds"


def closer_verdict(**fields) -> Verdict:
    return Verdict.from_dict(
        dict(
            script="fp8.py",
            argv=[],
            failing_stage="inductor",
            graph=0,
            graph_count=1,
            config={"emulate_precision_casts": True},
            subsystem=LOWERING,
            more_accurate={"graph": 0, "note": "compiled is more accurate", "case": None},
            exit_code=4,
            divergence={**NODE, "lowering": "agrees"},
            numerics=numerics_finding("2.13.0", {}),
            tarball="/runs/fp8.tar.gz",
            **fields,
        )
    )


def test_issue_md_says_compiled_is_the_more_accurate_and_what_gives_eager_bits_back():
    v = closer_verdict()
    lines = isolated_lines(v, numerics_lines(v))
    assert lines[3:] == [
        (
            "compiled is the more accurate: graph 0 differs from eager, and compiled is the closer of the two to a "
            "float64 reference; `emulate_precision_casts=True` makes compiled match eager (lowering "
            "`prims.convert_element_type.default`, application #7 of 8)"
        ),
        "numerics modes not asked: torch 2.13.0 has no TORCHINDUCTOR_NUMERICS",
        f"first diverging node: `{NODE['code']}` (node 5 of the 5 the diverging output is computed from, beyond "
        "1e-3); agrees with the lowering counter",
    ]


def test_compiled_more_accurate_is_one_line_and_exit_4(tmp_path, monkeypatch):
    """The verdict is finished and packed; the command says so in one line and exits 4 (README's exit codes)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fp8.py").write_text("import torch\n")
    monkeypatch.setattr(bisect_case, "bisect_script", lambda *a, **k: closer_verdict())
    result = CliRunner().invoke(main, ["bisect", "fp8.py", "--json"], prog_name="reprokit")
    assert result.exit_code == 4, result.output
    assert result.stderr == (
        "reprokit: compiled is more accurate than eager (float64 reference) in graph 0; `emulate_precision_casts=True` "
        "makes compiled match eager (lowering `prims.convert_element_type.default`, application #7 of 8); see "
        "ISSUE.md in /runs/fp8.tar.gz\n"
    )
