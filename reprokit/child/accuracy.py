"""The one accuracy check of compiled graphs: compiled against eager, judged with a float64 reference.

`eager_reference` runs the graph eagerly (and in float64) on copies of the inputs; `measure` turns one compiled
call into plain data per output and per mutated input; `judge` reads that data at one of two levels;
`compiled_more_accurate` says when a divergence is compiled being the better of the two (as PyTorch's after_aot
accuracy check does, that is no compiler bug). `child/gradients` does the same for input gradients. Measures
are JSON, so a graph trial can leave them in its folder (`write_measures`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from reprokit.child.tensor_numbers import dtype_name, exactly_equal, float_numbers
from reprokit.child.unwritten import hide, may_leave_unwritten, unwritten_masks
from reprokit.fx.random_ops import draws_random

DEFAULT, STRICT = "default", "strict"
TOL = 1e-3  # the default level's tolerance, as torch's accuracy minifier uses it
WORSE = 2.0  # strict level: compiled's float64 error must exceed eager's by this factor (torch's multiplier)
MORE_ACCURATE = "compiled is more accurate than eager here (float64 reference): not a compiler bug"


class AccuracyFailure(Exception):
    """A compiled graph's outputs differ from the same graph run eagerly."""


@dataclasses.dataclass
class Reference:
    """Eager's side of one call: its outputs, its copies of the inputs after the call (the graph may mutate
    them), the same two in float64 (None when the float64 run failed), and the inputs eager mutated."""

    outputs: Any
    fp64_outputs: Any
    inputs: list
    fp64_inputs: list | None
    mutated: frozenset
    unwritten: list | None = None  # per output, the elements eager never wrote (child/unwritten.py), or None


def copies(args, keep_grad: bool = False, float64: bool = False) -> list:
    """Detached copies of the tensors in args, sharing memory where the originals do (fx/aliases.py); leaves that
    require grad as the originals do, when asked; floating point ones in float64, when asked."""
    import torch

    from reprokit.fx import aliases

    def copy(a):
        # copy=True: a float64 tensor's .double() is itself, and the run writes to what it is given
        return a.detach().to(torch.float64, copy=True) if float64 and a.is_floating_point() else a.detach().clone()

    out = aliases.copied(list(args), copy)
    if keep_grad:
        out = [c.requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else c for a, c in zip(args, out)]
    return out


def same_rng(args):
    """A context in which random ops draw what they would draw outside it, and leave the script's stream as it
    was: every reference run starts from the state the compiled call starts from."""
    import torch

    cuda = sorted({a.device.index or 0 for a in args if isinstance(a, torch.Tensor) and a.is_cuda})
    return torch.random.fork_rng(devices=cuda)


def eager_reference(gm, args, run_eager=None) -> Reference | None:
    """Eager's results (and float64 ones) of the graph on copies of args; None when eager itself fails.
    run_eager: how to call the graph eagerly, when not plainly (e.g. inside the script's autocast region)."""
    import torch

    try:
        with torch.no_grad():
            inputs = copies(args)
            before = [a._version if isinstance(a, torch.Tensor) else None for a in inputs]
            with same_rng(args):
                outputs = (run_eager or gm)(*inputs)
            mutated = frozenset(
                i for i, (a, v) in enumerate(zip(inputs, before)) if v is not None and a._version != v
            )  # the version counter: in-place writes
            # No float64 referee for random ops: it draws its own mask, and never excuses randomness (issue 46).
            fp64_outputs, fp64_inputs = None, None
            if not draws_random(gm):
                with same_rng(args):
                    fp64_outputs, fp64_inputs = fp64_run(gm, args)
            unwritten = None
            if may_leave_unwritten(gm):

                def again():
                    with same_rng(args):
                        return (run_eager or gm)(*copies(args))

                unwritten = unwritten_masks(again, as_list(outputs))
        return Reference(outputs, fp64_outputs, inputs, fp64_inputs, mutated, unwritten)
    except Exception:
        return None


def fp64_run(gm, args):
    """(outputs, inputs after the call) of the graph in float64 on float64 copies of args (as torch's accuracy
    minifier casts them), or (None, None) when the graph cannot run in float64."""
    import copy

    from reprokit import compat

    try:
        with no_autocast():  # an outer autocast region would round the reference to bfloat16
            m64, a64 = compat.cast_to_fp64(copy.deepcopy(gm), copies(args, float64=True))
            return m64(*a64), a64
    except Exception:
        return None, None


def no_autocast():
    """The context of a float64 reference run: autocast off on every device type this build knows, and float64
    the default dtype, so tensors the graph itself creates (torch.ones(...)) are float64 like everything else."""
    import contextlib

    import torch

    stack = contextlib.ExitStack()
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    stack.callback(torch.set_default_dtype, old)
    for device in ("cpu", "cuda"):
        if device == "cpu" or torch.cuda.is_available():
            stack.enter_context(torch.autocast(device, enabled=False))
    return stack


def measure(reference: Reference, out, args=None) -> list:
    """Plain data per output of the compiled call (and per input it or eager mutated, when args, the compiled
    call's inputs after the call, are given): see tensor_measure."""
    import torch

    refs, outs = as_list(reference.outputs), as_list(out)
    f64s = as_list(reference.fp64_outputs) if reference.fp64_outputs is not None else [None] * len(refs)
    found = []
    if len(refs) != len(outs):
        found.append(
            {
                "name": "outputs",
                "kind": "output",
                "index": None,
                "float": False,
                "same": False,
                "problem": f"{len(outs)} outputs vs eager {len(refs)}",
            }
        )
    for i, (r, o) in enumerate(zip(refs, outs)):
        r64 = f64s[i] if i < len(f64s) else None
        if reference.unwritten and i < len(reference.unwritten):
            r, o, r64 = hide(reference.unwritten[i], r, o, r64)  # garbage eager left there is no wrong answer
        found += pair_measure(f"output {i}", "output", i, r, o, r64)
    eager_in, fp64_in = reference.inputs, reference.fp64_inputs or [None] * len(reference.inputs)
    for i, (e, c) in enumerate(zip(eager_in, args or [])):
        if (
            isinstance(e, torch.Tensor)
            and isinstance(c, torch.Tensor)
            and (i in reference.mutated or not exactly_equal(e, c.detach()))
        ):
            found += pair_measure(f"input {i} (mutated)", "input", i, e, c, fp64_in[i])
    return found


def pair_measure(name: str, kind: str, index: int, r, o, r64) -> list:
    """[] when neither side is a tensor (None beside None); else the one measure of the pair."""
    import torch

    if not isinstance(r, torch.Tensor) and not isinstance(o, torch.Tensor):
        return []
    if not isinstance(r, torch.Tensor) or not isinstance(o, torch.Tensor):
        return [
            {
                "name": name,
                "kind": kind,
                "index": index,
                "float": False,
                "same": False,
                "problem": f"{type(o).__name__} vs eager {type(r).__name__}",
            }
        ]
    return [
        tensor_measure(
            name,
            kind,
            index,
            r.detach(),
            o.detach(),
            r64.detach() if isinstance(r64, torch.Tensor) and r64.shape == r.shape else None,
        )
    ]


def tensor_measure(name: str, kind: str, index: int, r, o, r64) -> dict:
    """One compiled tensor o against eager's r (and float64's r64): name, kind, index, dtype, shape, float, same
    (the default level's verdict), problem (what differs beyond numbers), and for floats max_abs, max_rel,
    compiled_vs_fp64, eager_vs_fp64 (max abs errors; None without float64) and their root mean squares,
    magnitude (of float64, else eager), noise_floor (64 ulp of it) and the worst element's values."""

    from reprokit import compat

    m = {
        "name": name,
        "kind": kind,
        "index": index,
        "dtype": dtype_name(o.dtype),
        "shape": list(o.shape),
        "float": o.is_floating_point() or o.is_complex(),
        "problem": None,
    }
    if r.dtype != o.dtype or r.shape != o.shape:
        m.update(same=False, problem=f"{m['dtype']}{m['shape']} vs eager {dtype_name(r.dtype)}{list(r.shape)}")
    elif not m["float"]:
        # torch's after_aot accuracy check skips non-float outputs; a wrong index is still wrong.
        differ = int((r != o).sum())
        m.update(same=differ == 0, problem=f"{differ} of {r.numel()} {m['dtype']} elements differ" if differ else None)
    else:
        from reprokit.fx.materialize import across_zero

        m.update(float_numbers(r, o, r64))
        # Where float64 lands across zero from eager it cannot referee (across_zero): eager alone judges.
        crossed = r64 is not None and not r.is_complex() and bool(across_zero(r, r64).any())
        fp64_ref = None if crossed else r64
        m["same"] = m["max_abs"] == 0 or compat.same(r, o, fp64_ref=fp64_ref, tol=TOL)
    return m


def judge(measures: list, level: str = DEFAULT) -> str | None:
    """A one-line description of the first mismatch, or None when compiled agrees with eager.

    default: torch's `same` with a float64 reference (tolerance 1e-3; compiled may be up to twice as far from
    float64 as eager). strict, for when the script's own tolerance is unknown: also a mismatch when compiled's
    error against float64 is more than twice eager's and more than 64 ulp of the output's magnitude. Without a
    float64 reference the strict level keeps the default verdict. Non-float tensors must be equal at both."""
    for m in measures:
        if m.get("problem"):
            return f"{m['name']}: {m['problem']}"
        if m["float"] and (not m["same"] or (level == STRICT and strictly_worse(m))):
            return f"{m['name']}: {describe(m)}"
    return None


def strictly_worse(m: dict) -> bool:
    """The strict rule: compiled farther from float64 than twice eager's error, and beyond rounding."""
    ec, ee = m.get("compiled_vs_fp64"), m.get("eager_vs_fp64")
    if ec is None or ee is None:
        return False
    return ec > WORSE * ee and ec > m["noise_floor"]


def compiled_more_accurate(measures: list) -> bool:
    """True when compiled and eager diverge (beyond rounding) and every diverging output is a float one where
    compiled is closer to the float64 reference than eager is (a smaller worst error, and no larger root mean
    square error: compiled off a little everywhere is not better than eager off a lot at one element)."""
    diverging = [m for m in measures if m.get("problem") or (m["float"] and m["max_abs"] > m["noise_floor"])]
    return bool(diverging) and all(
        not m.get("problem")
        and m["float"]
        and m.get("compiled_vs_fp64") is not None
        and m["compiled_vs_fp64"] < m["eager_vs_fp64"]
        and m["compiled_rms_vs_fp64"] <= m["eager_rms_vs_fp64"]
        and not worst_across_zero(m)
        for m in diverging
    )


def worst_across_zero(m: dict) -> bool:
    """Whether eager and float64 have opposite signs where compiled and eager differ most (fx/materialize's
    across_zero): #194347's minimum(-0.0, 0.0) is +0.0 compiled and in float64, -0.0 in float32 eager, and atan2
    turns that into -pi against +pi; float64 then sides with compiled by a choice, not by precision."""
    import torch

    from reprokit.fx.materialize import across_zero

    w = m.get("worst") or {}
    if not isinstance(w.get("eager"), float) or not isinstance(w.get("fp64"), float):
        return False
    dtype = getattr(torch, m.get("dtype", "float32"), torch.float32)
    dtype = dtype if isinstance(dtype, torch.dtype) and dtype.is_floating_point else torch.float32
    e = torch.tensor([w["eager"]], dtype=dtype)
    return bool(across_zero(e, torch.tensor([w["fp64"]], dtype=torch.float64))[0])


def verdict(measures: list | None, level: str = DEFAULT) -> tuple:
    """(mismatch, note): the judge's mismatch, unless compiled is the more accurate one; then (None, note)."""
    mismatch = judge(measures, level) if measures else None
    if mismatch and measures and compiled_more_accurate(measures):
        return None, MORE_ACCURATE
    return mismatch, None


def describe(m: dict) -> str:
    """max abs/rel diff compiled vs eager, where, the values there, and both errors against float64."""
    text = f"max abs diff {m['max_abs']:.3g}, max rel diff {m['max_rel']:.3g}"
    w = m.get("worst")
    if w:
        fp64 = f", float64 {w['fp64']:.17g}" if isinstance(w["fp64"], float) else ""
        text += (
            f" at {w['at']} (eager {w['eager']:.9g}, compiled {w['compiled']:.9g}{fp64})"
            if isinstance(w["eager"], float)
            else f" at {w['at']}"
        )
    if m.get("compiled_vs_fp64") is not None:
        text += f"; error vs float64: compiled {m['compiled_vs_fp64']:.3g}, eager {m['eager_vs_fp64']:.3g}"
    return text


def compare_outputs(reference, out, args=None) -> str | None:
    """The default level's mismatch of one compiled call (None when it agrees or is the more accurate one).
    reference may also be an (eager outputs, float64 outputs) pair, as before measures: then pairs where
    either side is not a tensor are not compared."""
    import torch

    if reference is None:
        return None
    if isinstance(reference, tuple):
        refs, outs = as_list(reference[0]), as_list(out)
        keep = [
            i for i, (r, o) in enumerate(zip(refs, outs)) if isinstance(r, torch.Tensor) and isinstance(o, torch.Tensor)
        ]
        found = measure(
            Reference(refs, reference[1], [], None, frozenset()),
            [o if i in keep else refs[i] for i, o in enumerate(outs)],
        )
        return verdict([m for m in found if m["index"] in keep])[0]
    return verdict(measure(reference, out, args))[0]


def write_measures(path: str, measures: list) -> None:
    """accuracy.json: the measures and what each level, and the more-accurate rule, make of them."""
    from reprokit.data.rundir import write_json_atomic

    write_json_atomic(
        path,
        {
            "measures": measures,
            "default": judge(measures, DEFAULT),
            "strict": judge(measures, STRICT),
            "compiled_more_accurate": compiled_more_accurate(measures),
        },
    )


def as_list(out) -> list:
    """A graph's outputs as a list (a single tensor is one output)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]
