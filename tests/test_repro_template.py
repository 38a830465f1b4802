"""repro.py as rendered: valid Python for every combination of its switches, and the script's context in it."""
import itertools

import pytest

from reprokit.report.render import context_parts, environment

BASE = dict(reprokit_version="0", torch_version="2", command="reprokit bisect s.py", stage_title="inductor",
            expected="accuracy", nodes=3, original_nodes=9, graph=0, imports="", config_lines=[], attributes=[],
            forward="def forward(self, x):\n    return (x.relu(),)", use_saved=False, input_lines=["torch.randn(3)"],
            backend="inductor", mode=None, options=None, submodules=[], children=[], graph_kind="forward",
            prelude=None, hook_lines=[], context_setup=[], context_with=None, dynamic=False)


@pytest.mark.parametrize("accuracy, backward, strict", list(itertools.product([True, False], repeat=3)))
def test_every_combination_renders_valid_python(accuracy, backward, strict):
    src = environment().get_template("repro.py.j2").render(**BASE, accuracy=accuracy, backward=backward,
                                                            strict=strict)
    compile(src, "repro.py", "exec")


def test_context_prelude_and_hooks_are_in_the_repro():
    setup, with_items = context_parts({"autocast": {"cpu": "bfloat16"}, "grad_enabled": False,
                                       "default_dtype": "float64", "deterministic": True})
    src = environment().get_template("repro.py.j2").render(
        **{**BASE, "prelude": "@torch.library.custom_op('rk::f', mutates_args=())\ndef f(x: torch.Tensor) -> "
                              "torch.Tensor:\n    return x.clone()",
           "hook_lines": ["torch._inductor.config.post_grad_custom_post_pass = my_pass"],
           "context_setup": setup, "context_with": with_items}, accuracy=True, backward=False, strict=False)
    compile(src, "repro.py", "exec")
    assert "torch.set_default_dtype(torch.float64)" in src and "torch.use_deterministic_algorithms(True)" in src
    assert "with torch.autocast('cpu', dtype=torch.bfloat16), torch.no_grad():\n        return fn(*args)" in src
    assert "@torch.library.custom_op('rk::f'" in src
    assert "torch._inductor.config.post_grad_custom_post_pass = my_pass" in src
