"""Elements eager never wrote are found by a second eager run with uninitialized memory filled (child/unwritten.py),
and the accuracy check leaves them out: real eager runs, a real compiled output (pytorch/pytorch#93437)."""
import torch

from reprokit.child.accuracy import eager_reference, judge, measure
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
    assert masks[0][64:].sum() >= 60  # the rest, except where garbage happened to be NaN in both runs


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
