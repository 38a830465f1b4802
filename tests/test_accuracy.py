"""The one accuracy check (reprokit/child/accuracy.py), in-process on small real graphs: what it measures, what
each level calls a mismatch, and when compiled is the more accurate one."""

import json
import math

import pytest
import torch
import torch.fx as fx

from reprokit.child import accuracy as acc
from reprokit.child import gradients


def graph(fn):
    return fx.symbolic_trace(fn)


def check(fn, args, wrong=None, compiled_args=None):
    """Measures of fn compiled (backend="eager", so right) against eager, or of `wrong(outputs)` in its place."""
    gm = graph(fn)
    reference = acc.eager_reference(gm, args)
    assert reference is not None
    call_args = compiled_args if compiled_args is not None else args
    out = torch.compile(gm, backend="eager")(*call_args)
    return acc.measure(reference, wrong(out) if wrong else out, call_args)


def by_name(measures):
    return {m["name"]: m for m in measures}


def test_right_outputs_pass_both_levels_with_none_and_int_outputs():
    def f(x):
        return x.sin(), None, x.argmax()

    measures = check(f, [torch.randn(32)])
    assert [m["name"] for m in measures] == ["output 0", "output 2"]  # the None output has nothing to measure
    m = by_name(measures)["output 0"]
    assert (m["dtype"], m["shape"], m["max_abs"]) == ("float32", [32], 0.0)
    assert m["compiled_vs_fp64"] == m["eager_vs_fp64"] > 0  # float32 sin rounds; both round alike
    assert acc.judge(measures) is None and acc.judge(measures, acc.STRICT) is None
    assert not acc.compiled_more_accurate(measures)
    json.dumps(measures)  # plain data


def test_a_wrong_float_output_names_the_output_the_size_and_the_place():
    x = torch.randn(4, 8)

    def f(x):
        return torch.relu(x), x * 2

    def off(out):
        bad = out[1].clone()
        bad[2, 5] += 0.5
        return out[0], bad

    measures = check(f, [x], off)
    line = acc.judge(measures)
    assert line.startswith("output 1: max abs diff 0.5, max rel diff ") and " at [2, 5] (eager " in line
    assert "error vs float64: compiled 0.5, eager 0" in line
    assert acc.judge(measures, acc.STRICT) == line
    assert not acc.compiled_more_accurate(measures)


def test_non_float_outputs_must_be_exactly_equal_dtype_too():
    x = torch.randn(16)

    def f(x):
        return x.argsort(), x > 0

    one_index_off = check(f, [x], lambda out: (out[0].flip(0), out[1]))
    assert acc.judge(one_index_off) == "output 0: 16 of 16 int64 elements differ"
    other_dtype = check(f, [x], lambda out: (out[0].to(torch.int32), out[1]))
    assert acc.judge(other_dtype) == "output 0: int32[16] vs eager int64[16]"
    assert not acc.compiled_more_accurate(other_dtype)
    missing = check(f, [x], lambda out: (out[0], None))
    assert acc.judge(missing) == "output 1: NoneType vs eager Tensor"


def test_an_input_the_graph_mutates_must_end_up_equal():
    def f(x, y):
        x.mul_(2)
        return y + 1

    x, y = torch.randn(8), torch.randn(8)
    measures = check(f, [x.clone(), y])
    assert [m["name"] for m in measures] == ["output 0", "input 0 (mutated)"]
    assert acc.judge(measures) is None
    # A compiled graph that forgot the in-place write: its output is right, its input is not.
    forgot = acc.measure(acc.eager_reference(graph(f), [x.clone(), y]), (y + 1,), [x.clone(), y])
    assert acc.judge(forgot).startswith("input 0 (mutated): max abs diff ")
    # One that writes an input eager leaves alone is caught too.
    wrote = acc.measure(acc.eager_reference(graph(f), [x.clone(), y]), (y + 1,), [x.clone() * 2, y + 3])
    assert acc.judge(wrote).startswith("input 1 (mutated): max abs diff 3")


def test_float64_erfinv_off_by_6e5_fails_strict_but_passes_the_default_level():
    """pytorch#198133: eager's float64 erfinv is exact; inductor's is 6e-5 off, relatively. torch's `same`
    (tolerance 1e-3) lets that through; a script asking rtol=1e-9 does not, and neither does the strict level."""
    p = torch.tensor([0.9995, 1 - 5e-10, 1 - 5e-13] + [0.1 * i for i in range(9)], dtype=torch.float64)

    def f(p):
        return torch.erfinv(2.0 * p - 1.0)

    measures = check(f, [p], lambda out: out * (1 + 6e-5))
    m = measures[0]
    assert m["eager_vs_fp64"] == 0.0 and m["compiled_vs_fp64"] > 0
    assert acc.judge(measures) is None
    assert acc.judge(measures, acc.STRICT).startswith("output 0: max abs diff ")
    assert not acc.compiled_more_accurate(measures)


def test_float32_reduction_reordered_passes_strict():
    """A sum split in blocks (as inductor's split reductions do) rounds differently: noise, not a bug."""
    x = torch.randn(64, 4096)

    def f(x):
        return x.sum(dim=-1)

    measures = check(f, [x], lambda out: x.view(64, 64, 64).sum(-1).sum(-1))
    m = measures[0]
    assert m["max_abs"] > 0  # it does differ from eager
    assert acc.judge(measures) is None and acc.judge(measures, acc.STRICT) is None


def test_compiled_closer_to_float64_than_eager_is_not_a_bug():
    """Eager float32 loses x's low bits adding and taking away 1e4; a compiler that keeps more precision
    (here: computing in float64) is closer to the float64 truth."""
    x = torch.randn(256)

    def f(x):
        return (x + 1e4) - 1e4

    measures = check(f, [x], lambda out: ((x.double() + 1e4) - 1e4).float())
    m = measures[0]
    assert m["max_abs"] > m["noise_floor"] and m["compiled_vs_fp64"] < m["eager_vs_fp64"]
    assert acc.judge(measures) is None  # torch's float64 rule lets a better compiled result through
    assert acc.compiled_more_accurate(measures)
    # Should a level call it a mismatch anyway (a script's own tolerance), the verdict is a note, not a failure.
    flagged = [dict(m, same=False)]
    assert acc.judge(flagged) is not None
    assert acc.verdict(flagged) == (None, acc.MORE_ACCURATE)


def test_compiled_off_everywhere_is_not_better_than_eager_off_at_one_element():
    x = torch.randn(2000)

    def f(x):
        return x * 3

    rough = check(f, [x], lambda out: out + 0.05)
    rough[0].update(eager_vs_fp64=1.0, eager_rms_vs_fp64=1.0 / math.sqrt(2000))  # eager: one element off by 1
    assert not acc.compiled_more_accurate(rough)


class WrongGrad(torch.autograd.Function):
    """Identity forward; backward doubles the gradient: a compiler bug in backward only."""

    @staticmethod
    def forward(ctx, t):
        return t.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_gradients_compared_and_a_backward_only_bug_named():
    def f(x, w):
        return torch.tanh(x @ w), None

    gm = graph(f)
    x, w = torch.randn(4, 8), torch.randn(8, 3, requires_grad=True)
    right = gradients.gradient_measures(gm, torch.compile(gm, backend="eager"), [x, w])
    assert [m["name"] for m in right] == ["gradient of input 1"]
    assert acc.judge(right) is None

    def wrong(x, w):
        out, none = gm(x, w)
        return WrongGrad.apply(out), none

    measures = gradients.gradient_measures(gm, wrong, [x, w])
    assert acc.judge(measures).startswith("gradient of input 1: max abs diff ")
    assert w.grad is None  # the script's tensors are untouched
    with torch.no_grad():
        assert gradients.gradient_measures(gm, wrong, [x, w]) is None  # no backward can run: nothing to compare
    assert gradients.gradient_measures(gm, wrong, [x, w.detach()]) is None


def test_write_measures_is_json_with_each_levels_verdict(tmp_path):
    p = torch.tensor([0.9995, 1 - 5e-13, 0.5], dtype=torch.float64)
    measures = check(lambda p: torch.erfinv(p), [p], lambda out: out * (1 + 6e-5))
    acc.write_measures(str(tmp_path / "accuracy.json"), measures)
    data = json.loads((tmp_path / "accuracy.json").read_text())
    assert data["default"] is None and data["strict"].startswith("output 0: ")
    assert data["compiled_more_accurate"] is False
    assert data["measures"][0]["dtype"] == "float64" and acc.judge(data["measures"], acc.STRICT) == data["strict"]


def test_reference_runs_leave_the_scripts_random_stream_alone():
    def f(x):
        return torch.nn.functional.dropout(x, 0.5)

    torch.manual_seed(1)
    expected = torch.rand(3)
    torch.manual_seed(1)
    assert acc.eager_reference(graph(f), [torch.ones(16)]) is not None
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("level", [acc.DEFAULT, acc.STRICT])
def test_nan_in_compiled_only_fails_every_level(level):
    x = torch.rand(8) + 0.5

    def f(x):
        return torch.log(x)

    def nan_at_3(out):
        bad = out.clone()
        bad[3] = float("nan")
        return bad

    line = acc.judge(check(f, [x], nan_at_3), level)
    assert line.startswith("output 0: max abs diff inf") and "at [3]" in line and "compiled nan" in line


def unfold_gapped_inplace(signal):
    """pytorch#198102: an in-place update through a gapped unfold view; under AOT autograd's functionalization
    the base's elements between the windows come back zero. The output (the windows' mean) is right."""
    frames = signal.unfold(1, 1, 5)
    frames.mul_(2.0)
    return frames.mean()


def test_a_real_wrong_input_mutation_is_caught():
    x = torch.randn(4, 12)
    gm = dynamo_graph(unfold_gapped_inplace, [x.clone()])
    reference = acc.eager_reference(gm, [x.clone()])
    args = [x.clone()]
    out = torch.compile(unfold_gapped_inplace, backend="aot_eager")(*args)  # the call the router sees
    measures = acc.measure(reference, out, args)
    assert acc.judge([by_name(measures)["output 0"]]) is None  # the output is right: only the input is wrong
    line = acc.judge(measures)
    assert line.startswith("input 0 (mutated): max abs diff ") and ", compiled 0, float64 " in line


def dynamo_graph(fn, args):
    """The graph Dynamo hands a backend for fn(*args)."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch.compile(fn, backend=keep)(*args)
    return graphs[0]


def repro_for(tmp_path, fn, args, backend, strict=False):
    """repro.py (accuracy block on, saved inputs) for the graph of fn, as reprokit writes it."""
    import types

    from reprokit.fx.capture import capture_graph
    from reprokit.fx.materialize import repro_parts
    from reprokit.report.render import render_repro

    gm = dynamo_graph(fn, args)
    compile_args = {"backend": backend, "mode": None, "options": None, "dynamic": None, "fullgraph": False}
    capture_graph(gm, args, str(tmp_path / "case"), max_input_bytes=1 << 30, compile_args=compile_args)
    parts = repro_parts(str(tmp_path / "case"), None, str(tmp_path))
    text = render_repro(
        parts,
        types.SimpleNamespace(graph=0),
        stage=backend,
        target=types.SimpleNamespace(short=lambda: "wrong values", said=lambda: "wrong values"),
        accuracy=True,
        backward=False,
        use_saved=True,
        command="reprokit bisect x.py",
        original_nodes=parts["nodes"],
        strict=strict,
    )
    (tmp_path / "repro.py").write_text(text)
    return tmp_path / "repro.py"


def run_repro(path):
    import subprocess
    import sys

    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600, cwd=path.parent)


@pytest.mark.slow
def test_repro_compares_mutated_inputs(tmp_path):
    repro = repro_for(tmp_path, unfold_gapped_inplace, [torch.randn(4, 12)], "aot_eager")
    text = repro.read_text()
    assert "reprokit" not in text.split("import torch", 1)[1]  # torch-only
    p = run_repro(repro)
    assert p.returncode == 1, p.stdout + p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("AssertionError: input 0: Tensor-likes are not close!"), p.stderr[-2000:]


def probit(p):
    return torch.erfinv(2.0 * p - 1.0) * (2.0**0.5)


@pytest.mark.slow
@pytest.mark.parametrize("strict", [False, True])
def test_repro_of_float64_erfinv_fails_only_at_the_strict_level(tmp_path, strict):
    """pytorch#198133: inductor's float64 erfinv is 6e-5 off near 1, eager exact: under rtol 1e-3 that passes;
    the strict rule (farther from float64 than eager, beyond 64 ulp) fails it and shows the three values."""
    p = torch.tensor([0.9995, 1 - 5e-10, 1 - 5e-13, 1 - 5e-15, 0.3, 0.6], dtype=torch.float64)
    proc = run_repro(repro_for(tmp_path, probit, [p], "inductor", strict=strict))
    if not strict:
        assert proc.returncode == 0 and "no failure" in proc.stdout, proc.stdout + proc.stderr
        return
    assert proc.returncode == 1, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("AssertionError: output 0: error vs float64 ") and "eager's 0" in last, proc.stderr[-2000:]


def test_float64_across_zero_from_eager_cannot_say_compiled_is_the_more_accurate():
    """#194347: minimum(-0.0, 0.0) is -0.0 in float32 eager but +0.0 compiled, and +0.0 in this CPU's float64
    kernel too; atan2 turns that into -pi against +pi. float64 sides with compiled by a choice, not by precision:
    eager alone judges, and it is a mismatch."""
    from reprokit.fx.materialize import float64_error

    if torch.minimum(torch.full((8,), -0.0, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)).signbit()[0]:
        pytest.skip("this CPU's float64 minimum keeps -0.0: float64 and eager do not cross here")

    def f(y, x):
        return torch.atan2(torch.minimum(y, torch.zeros_like(y)), x)

    y, x = torch.full((8,), -0.0), -torch.rand(8) - 0.5
    measures = check(f, [y, x], lambda out: out.abs())  # compiled: +pi where eager says -pi, as float64 does
    m = measures[0]
    assert m["worst"]["eager"] < 0 < m["worst"]["fp64"] and m["compiled_vs_fp64"] < m["eager_vs_fp64"]
    assert not m["same"] and acc.judge(measures).startswith("output 0: max abs diff 6.28")
    assert not acc.compiled_more_accurate(measures) and acc.verdict(measures)[1] is None
    # repro.py's check then runs without a float64 reference, and says why.
    assert float64_error(graph(f), [y, x]).startswith("float64 lands across zero from eager: output 0 eager -3.1")
    assert float64_error(graph(lambda y, x: torch.atan2(y, x)), [y, x]) is None
