"""Elements eager never wrote are found by a second eager run with uninitialized memory filled (child/unwritten.py),
and the accuracy check leaves them out: real eager runs, a real compiled output (pytorch/pytorch#93437)."""

import torch

from reprokit.child.accuracy import Reference, eager_reference, judge, measure
from reprokit.child.unwritten import unwritten_masks


def half_written(x):
    scratch = x * 3 + 1
    total = scratch.sum()
    out = torch.empty(2 * x.numel())
    out.narrow(0, 0, x.numel()).copy_(x.sin() + total * 0)
    return out


def test_the_second_eager_run_names_exactly_the_elements_never_written():
    x = torch.randn(64)
    first = half_written(x)
    masks = unwritten_masks(lambda: half_written(x), [first])
    assert masks[0] is not None
    assert not masks[0][:64].any()  # written: never masked
    assert masks[0][64:].all()  # the rest, all of it (NaN beside the fill's NaN included)


def test_a_compiled_graph_that_leaves_other_garbage_there_is_judged_the_same():
    gm = torch.fx.symbolic_trace(half_written)
    x = torch.randn(256)
    reference = eager_reference(gm, [x])
    compiled = torch.compile(gm)(x)
    assert not torch.equal(compiled[256:], reference.outputs[256:])  # the garbage differs ...
    assert judge(measure(reference, compiled, [x])) is None  # ... and is no mismatch
    wrong = compiled.clone()
    wrong[3] += 1.0  # a written element that differs still is one
    assert judge(measure(reference, wrong, [x])) is not None


def test_garbage_that_is_nan_in_eager_and_inf_in_float64_neither_hides_nor_fakes_a_mismatch():
    # Freed memory an earlier fill left NaN is what a later torch.empty may return: eager's garbage is then NaN in
    # both of its runs, and the float64 run's garbage anything (inf here). CI at 8d49b25 saw that happen.
    x = torch.randn(8)
    eager = torch.cat([x.sin(), torch.full((8,), float("nan"))])
    masks = unwritten_masks(lambda: eager.clone(), [eager])
    assert masks[0].tolist() == [False] * 8 + [True] * 8
    fp64 = torch.cat([x.double().sin(), torch.full((8,), float("inf"), dtype=torch.float64)])
    reference = Reference(eager, fp64, [x], None, frozenset(), masks)
    compiled = torch.cat([x.sin(), torch.randn(8)])
    assert judge(measure(reference, compiled, [x])) is None
    compiled[3] += 1.0
    assert judge(measure(reference, compiled, [x])).startswith("output 0: max abs diff 1")
