"""repro.py as rendered: valid Python for every combination of its switches, and the script's context in it."""
import itertools

import pytest

from reprokit.report.render import context_parts, environment

BASE = dict(reprokit_version="0", torch_version="2", command="reprokit bisect s.py", stage_title="inductor",
            expected="accuracy", nodes=3, original_nodes=9, graph=0, imports="", config_lines=[], attributes=[],
            forward="def forward(self, x):\n    return (x.relu(),)", use_saved=False, input_lines=["torch.randn(3)"],
            backend="inductor", mode=None, options=None, submodules=[], children=[], graph_kind="forward",
            prelude=None, hook_lines=[], context_setup=[], context_with=None, dynamic=False, inline=None,
            attribute_lines=[], launch_blocking=False)


@pytest.mark.parametrize("accuracy, backward, strict", list(itertools.product([True, False], repeat=3)))
def test_every_combination_renders_valid_python(accuracy, backward, strict):
    src = environment().get_template("repro.py.j2").render(**BASE, accuracy=accuracy, backward=backward,
                                                            strict=strict)
    compile(src, "repro.py", "exec")


def test_a_cuda_fault_repro_makes_launches_synchronous_before_torch_is_imported():
    src = environment().get_template("repro.py.j2").render(**{**BASE, "launch_blocking": True}, accuracy=False,
                                                            backward=False, strict=False)
    compile(src, "repro.py", "exec")
    assert src.index('os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")') < src.index("import torch")


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


@pytest.mark.parametrize("mode", ["synthetic", "inline", "file"])
def test_each_input_mode_renders_and_makes_its_inputs(mode, tmp_path):
    """Synthetic inputs (and buffers) from statistics, the real values inline, or the data file."""
    import torch

    parts = dict(BASE, attributes=["w"], input_lines=["synthetic((2, 3), torch.float32, mean=1.0, std=0.5, lo=0.0, "
                                                      "hi=2.0, special=('nan',))"],
                 attribute_lines=[("w", "synthetic((3,), torch.float32)")],
                 forward="def forward(self, x):\n    return (x + self.w,)",
                 inline={"inputs": ["torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float32).reshape((2, 3))"],
                         "attributes": {"w": "torch.tensor([0.5, 0.5, 0.5], dtype=torch.float32).reshape((3,))"}}
                 if mode == "inline" else None, use_saved=mode == "file")
    src = environment().get_template("repro.py.j2").render(**parts, accuracy=False, backward=False, strict=False)
    assert ("def synthetic(" in src) == (mode == "synthetic") and ("repro_inputs.pt" in src) == (mode == "file")
    (tmp_path / "repro.py").write_text(src)
    if mode == "file":
        torch.save({"inputs": [torch.ones(2, 3)], "attributes": {"w": torch.ones(3)}}, tmp_path / "repro_inputs.pt")
    namespace = {"__file__": str(tmp_path / "repro.py"), "__name__": "not_main"}
    exec(compile(src, "repro.py", "exec"), namespace)
    inputs, attributes = namespace["make_inputs"]()
    assert inputs[0].shape == (2, 3) and attributes["w"].shape == (3,)
    if mode == "synthetic":
        assert torch.isnan(inputs[0]).sum() == 1 and inputs[0].nan_to_num(1.0).min() >= 0.0
    if mode == "inline":
        assert inputs[0].sum() == 21
