"""Input gradients of a graph after a backward, compiled against eager and float64 (child/accuracy measures them)."""

from __future__ import annotations

from reprokit.child.accuracy import Reference, as_list, copies, measure, no_autocast, same_rng


def gradient_measures(gm, compiled, args, run_eager=None) -> list | None:
    """Measures of the input gradients, compiled against eager (and float64), after a backward with a grad of
    ones for every float output that requires grad; each side runs on its own detached copies of args. None
    when no input requires grad, grad mode is off, or a side cannot run (the script's own calls will show why)."""
    import torch

    if not torch.is_grad_enabled() or not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        return None
    try:
        with same_rng(args):
            eager = input_grads(run_eager or gm, copies(args, keep_grad=True))
        with same_rng(args):
            fp64 = fp64_grads(gm, args)
        with same_rng(args):
            comp = input_grads(compiled, copies(args, keep_grad=True))
    except Exception:
        return None
    if eager is None or comp is None:
        return None
    # A gradient autograd never reached is None on one side and may be zeros on the other: the same thing.
    eager = [torch.zeros_like(c) if e is None and c is not None else e for e, c in zip(eager, comp)]
    comp = [torch.zeros_like(e) if c is None and e is not None else c for e, c in zip(eager, comp)]
    found = measure(Reference(eager, fp64, [], None, frozenset()), comp)
    return [dict(m, name=f"gradient of input {m['index']}", kind="gradient") for m in found if m["index"] is not None]


def input_grads(fn, inputs) -> list | None:
    """The .grad of every input after fn's forward and a backward with ones; None when no output needs grad."""
    import torch

    outs = [
        o
        for o in as_list(fn(*inputs))
        if isinstance(o, torch.Tensor) and o.requires_grad and (o.is_floating_point() or o.is_complex())
    ]
    if not outs:
        return None
    torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
    return [a.grad if isinstance(a, torch.Tensor) and a.requires_grad else None for a in inputs]


def fp64_grads(gm, args) -> list | None:
    """input_grads of the graph in float64, or None when it cannot run in float64."""
    import copy

    import torch

    from reprokit import compat

    try:
        with no_autocast():
            m64, a64 = compat.cast_to_fp64(copy.deepcopy(gm), copies(args, float64=True))
            a64 = [
                b.detach().requires_grad_(a.requires_grad)
                if isinstance(b, torch.Tensor) and b.is_floating_point()
                else b
                for a, b in zip(args, a64)
            ]
            return input_grads(m64, a64)
    except Exception:
        return None
