"""repro.py as rendered: valid Python for every combination of its switches, short (a maintainer's length), its
inputs inline, and its accuracy check judging as before: eager, compiled, float64, compiled the more accurate."""

import itertools
import types

import pytest
import torch

from reprokit.minify.testcase import test_text as make_test_text
from reprokit.report.render import render_repro

RELU_INPUT = dict(
    kind="tensor",
    shape=[8, 128],
    stride=[128, 1],
    dtype="float32",
    device="cpu",
    contiguous=True,
    requires_grad=True,
    mean=0.005477,
    std=0.589068,
    min=-1.756,
    max=1.807,
    special=[],
)


def meta(t, **kw):
    from reprokit.fx.inputs import value_stats

    return dict(
        kind="tensor",
        shape=list(t.shape),
        stride=list(t.stride()),
        dtype=str(t.dtype)[6:],
        device="cpu",
        contiguous=t.is_contiguous(),
        requires_grad=t.requires_grad,
        **value_stats(t),
        **kw,
    )


def parts(
    forward="def forward(self, h):\n    relu = torch.relu(h);  h = None\n    return (relu,)",
    inputs=(RELU_INPUT,),
    names=("h",),
    **kw,
):
    base = dict(
        torch_version="2",
        nodes=3,
        imports="",
        attributes=[],
        forward=forward,
        inputs=list(inputs),
        input_names=list(names),
        attribute_meta={},
        inline=None,
        submodules=[],
        children=[],
        config_lines=["torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'runtime_error'"],
        prelude=None,
        hook_lines=[],
        context=None,
        dynamic=False,
        compile_args=None,
        float64_error=None,
    )
    return {**base, **kw}


def render(p, accuracy=False, backward=False, strict=False, use_saved=False, inline=False, cuda_fault=None):
    verdict = types.SimpleNamespace(graph=0, cuda_fault=cuda_fault)
    return render_repro(
        p,
        verdict,
        stage="inductor",
        target=types.SimpleNamespace(short=lambda: "SIGABRT", said=lambda: "SIGABRT"),
        accuracy=accuracy,
        backward=backward,
        use_saved=use_saved,
        inline=inline,
        strict=strict,
        command="reprokit bisect examples/relu_bug.py --output-dir /tmp/tmp.k745IDc1wV/out",
        original_nodes=41,
    )


def code_lines(text: str) -> list:
    return [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]


def harness_lines(text: str) -> list:
    """Code lines beyond the graph (imports, config, classes) and its inputs (the script's context, the seed, one
    line per input, the buffers): from the first helper or the compile call on."""
    lines = code_lines(text)
    start = next(i for i, l in enumerate(lines) if l.startswith(("def error(", "compiled = ")))
    return lines[start:]


CTX = {"autocast": {"cpu": "bfloat16"}, "grad_enabled": False, "default_dtype": "float64", "deterministic": True}


@pytest.mark.parametrize("accuracy, backward, strict, context, saved", list(itertools.product([True, False], repeat=5)))
def test_every_combination_renders_valid_python_within_the_harness_limit(accuracy, backward, strict, context, saved):
    text = render(
        parts(
            context=CTX if context else None,
            attributes=["w"] if saved else [],
            attribute_meta={"w": meta(torch.ones(3))},
        ),
        accuracy,
        backward,
        strict,
        use_saved=saved,
    )
    compile(text, "repro.py", "exec")
    # The strict rule's two lines, the backward's three and the context's with-line come on top of 15 at most; with
    # a backward, the context wraps each forward alone (four lines more: the script's backward ran outside it).
    extra = (
        (2 * strict + 3 * backward + context + 4 * (context and backward)) if accuracy else 2 * backward + 2 * context
    )
    assert len(harness_lines(text)) <= 15 + extra, "\n".join(harness_lines(text))
    assert ("import copy" in text) == (accuracy and saved)  # eager's own copy of the model's buffers


def test_the_relu_repro_is_what_a_maintainer_would_write():
    text = render(parts())
    assert len(code_lines(text)) <= 15, text
    assert "def " not in text.split("class Repro", 1)[1].split("return (relu,)", 1)[1]  # no helper, no wrapper
    assert "import os" not in text and "synthetic" not in text and "call(" not in text
    assert "\nh = (torch.randn(8, 128) * 0.589).requires_grad_()\n" in text
    assert "out = compiled(h)\n" in text
    # The command's temp folder once read <tmp><tmp>.k745IDc1wV/out.
    assert "# Made by: reprokit bisect examples/relu_bug.py --output-dir <tmp>/tmp.k745IDc1wV/out\n" in text


def test_a_cuda_fault_repro_makes_launches_synchronous_before_torch_is_imported():
    text = render(parts(), cuda_fault={"launch_blocking": True})
    compile(text, "repro.py", "exec")
    assert text.index('os.environ.setdefault("CUDA_LAUNCH_BLOCKING", "1")') < text.index("import torch")


def test_context_prelude_and_hooks_are_in_the_repro():
    text = render(
        parts(
            prelude="@torch.library.custom_op('rk::f', mutates_args=())\ndef f(x: torch.Tensor) -> "
            "torch.Tensor:\n    return x.clone()",
            hook_lines=["torch._inductor.config.post_grad_custom_post_pass = my_pass"],
            context=CTX,
        ),
        accuracy=True,
    )
    compile(text, "repro.py", "exec")
    assert "torch.set_default_dtype(torch.float64)" in text and "torch.use_deterministic_algorithms(True)" in text
    assert "with torch.autocast('cpu', dtype=torch.bfloat16), torch.no_grad():" in text
    assert "@torch.library.custom_op('rk::f'" in text
    assert "torch._inductor.config.post_grad_custom_post_pass = my_pass" in text
    # The input was float32 where the script's default dtype was float64: it says so.
    assert "torch.randn(8, 128, dtype=torch.float32)" in text


def inputs_of(text: str, folder) -> dict:
    """The variables repro.py's lines before its harness make (run in folder, as its own file)."""
    head = text.split("\ncompiled = ", 1)[0].split("\ndef error(", 1)[0]
    (folder / "repro.py").write_text(head)
    namespace = {"__file__": str(folder / "repro.py"), "__name__": "repro"}
    exec(compile(head, "repro.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("mode", ["synthetic", "inline", "file"])
def test_each_input_mode_renders_and_makes_its_inputs(mode, tmp_path):
    """Synthetic inputs (and buffers) from statistics, the real values inline, or the data file."""
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, float("nan")]])
    p = parts(
        forward="def forward(self, x):\n    return (x + self.w,)",
        inputs=[meta(x)],
        names=["x"],
        attributes=["w"],
        attribute_meta={"w": meta(torch.ones(3))},
        config_lines=[],
        inline={
            "inputs": ["torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape((2, 3))"],
            "attributes": {"w": "torch.tensor([0.5, 0.5, 0.5]).reshape((3,))"},
        },
    )
    text = render(p, inline=mode == "inline", use_saved=mode == "file")
    assert ("torch.manual_seed(0)" in text) == (mode == "synthetic") and ("repro_inputs.pt" in text) == (mode == "file")
    if mode == "file":
        torch.save({"inputs": [torch.ones(2, 3)], "attributes": {"w": torch.ones(3)}}, tmp_path / "repro_inputs.pt")
    made = inputs_of(text, tmp_path)
    assert made["x"].shape == (2, 3) and made["attributes"]["w"].shape == (3,)
    if mode == "synthetic":  # the NaN planted first, the range kept where it binds
        assert torch.isnan(made["x"]).sum() == 1 and made["x"].nan_to_num(1.0).min() >= 1.0
    if mode == "inline":
        assert made["x"].sum() == 21


FLOOR_DIVIDE = "def forward(self, t, w):\n    floordiv = t // w;  t = w = None\n    return (floordiv,)"


def accuracy_repro(forward=FLOOR_DIVIDE, inputs=None, names=("t", "w"), strict=False, float64_error=None):
    inputs = inputs or [meta(torch.randn(8, 16) * 3), meta(torch.randn(16) * 0.5)]
    return render(
        parts(forward=forward, inputs=inputs, names=names, config_lines=[], float64_error=float64_error),
        accuracy=True,
        strict=strict,
    )


def test_a_one_op_accuracy_repro_reads_in_about_twenty_lines():
    text = accuracy_repro()
    assert len(code_lines(text)) <= 22, text
    assert len(harness_lines(text)) <= 15, "\n".join(harness_lines(text))
    assert "results(Repro(), t.clone(), w.clone()), results(compiled, t, w)" in text
    assert "reference = results(Repro().double(), t.double(), w.double())" in text


def run_harness(text: str, compiled_forward: str) -> None:
    """repro.py's harness run with `compiled` a module of its own (a stand-in for a miscompiled graph)."""
    wrong = "class Compiled(torch.nn.Module):\n" + "\n".join("    " + l for l in compiled_forward.splitlines())
    text = text.replace('compiled = torch.compile(Repro(), backend="inductor")', wrong + "\ncompiled = Compiled()")
    exec(compile(text, "repro.py", "exec"), {"__name__": "repro"})


IDENTITY = "def forward(self, x):\n    return (x * 1,)"
X = [meta(torch.randn(64) * 10)]


def test_compiled_farther_from_float64_than_eager_fails():
    with pytest.raises(AssertionError, match=r"^output 0: Tensor-likes are not close!"):
        run_harness(accuracy_repro(IDENTITY, X, ["x"]), "def forward(self, x):\n    return (x + 0.01,)")


def test_compiled_closer_to_float64_than_eager_is_the_more_accurate_and_passes():
    # eager rounds to float32 between the two ops; "compiled" computes in float64 and rounds once.
    forward = "def forward(self, x):\n    return ((x * 3.1) / 3.1 - x,)"
    better = "def forward(self, x):\n    return (((x.double() * 3.1) / 3.1 - x.double()).float(),)"
    run_harness(accuracy_repro(forward, X, ["x"]), better)


def test_the_strict_rule_fails_what_the_tolerance_lets_through():
    """Within rtol=atol=1e-3 of eager, but over twice eager's error against float64 and beyond 64 ulp."""
    off = "def forward(self, x):\n    return (x * (1 + 1e-5),)"
    run_harness(accuracy_repro(IDENTITY, X, ["x"]), off)
    with pytest.raises(AssertionError, match=r"^output 0: .*float64"):
        run_harness(accuracy_repro(IDENTITY, X, ["x"], strict=True), off)


def test_integers_must_be_equal_and_a_mutated_input_is_compared():
    ints = [meta(torch.randint(4000, 5000, (16,)))]
    with pytest.raises(AssertionError, match=r"^output 0: "):
        run_harness(accuracy_repro(IDENTITY, ints, ["x"]), "def forward(self, x):\n    return (x + 1,)")
    mutating = "def forward(self, x):\n    x.mul_(2)\n    return (x.sum(),)"
    with pytest.raises(AssertionError, match=r"^input 0: "):
        run_harness(
            accuracy_repro(mutating, X, ["x"]), "def forward(self, x):\n    x.mul_(3)\n    return (x.sum() / 1.5,)"
        )


def test_without_float64_eager_alone_judges():
    text = accuracy_repro(IDENTITY, X, ["x"], float64_error="RuntimeError: no double kernel")
    assert "reference = {}  # no float64 reference" in text and ".double()" not in text
    with pytest.raises(AssertionError):
        run_harness(text, "def forward(self, x):\n    return (x + 0.01,)")


def test_test_repro_is_the_repro_as_a_pytorch_test_of_at_most_40_lines():
    for text in (render(parts(), accuracy=True), accuracy_repro()):
        test = make_test_text(
            text,
            types.SimpleNamespace(graph=0),
            "inductor",
            types.SimpleNamespace(short=lambda: "SIGABRT", said=lambda: "SIGABRT"),
            backward=False,
        )
        compile(test, "test_repro.py", "exec")
        assert len(test.splitlines()) <= 40, test
        assert "class TestCompileRepro(TestCase):" in test and "run_tests()" in test and "print(" not in test


def test_the_header_command_stays_as_rendered_through_the_packs_pass():
    """The pack makes repro.py's comments portable again: a placeholder's path is not rewritten a second time."""
    from reprokit.report.portable import places, portable_code, portable_command

    command = portable_command("reprokit bisect s.py --output-dir /tmp/tmp.k745IDc1wV/out -- --name 'a b'")
    assert command == "reprokit bisect s.py --output-dir <tmp>/tmp.k745IDc1wV/out -- --name 'a b'"
    text = f"# Made by: {command}\nx = '/tmp/tmp.k745IDc1wV/out'\n"
    assert portable_code(text, places("/nowhere/run", "/nowhere/project")) == text
