"""The inputs part of repro.py: one named variable per graph input (synthetic, or the real values inline), and the
argument lists its harness passes: the inputs themselves to the compiled graph, copies to eager and float64 ones."""

from __future__ import annotations

import builtins
import re

from reprokit.fx import aliases
from reprokit.fx.inputs import synthetic_expr

# Names repro.py's own lines use: an input named so gets a trailing underscore instead of shadowing them.
TEMPLATE_NAMES = {
    "torch",
    "os",
    "copy",
    "Repro",
    "model",
    "compiled",
    "out",
    "grads",
    "saved",
    "attributes",
    "expected",
    "actual",
    "reference",
    "results",
    "error",
    "name",
    "self",
}


def input_parts(parts: dict, inline: bool, backward: bool) -> dict:
    """{"names", "inputs" [(name, expression)], "attribute_lines", "args", "copies", "copies64"} for the template."""
    metas = parts["inputs"]
    names = variable_names(parts.get("input_names") or [f"x{i}" for i in range(len(metas))], parts)
    exprs = parts["inline"]["inputs"] if inline else [synthetic_expr(m, default_dtype(parts)) for m in metas]
    attribute_metas = parts.get("attribute_meta") or {}
    attributes = [
        (
            name,
            parts["inline"]["attributes"][name]
            if inline
            else synthetic_expr(attribute_metas[name], default_dtype(parts))
            if name in attribute_metas
            else "None",
        )
        for name in parts["attributes"]
    ]
    copies = [copy_expr(n, m, None, backward) for n, m in zip(names, metas)]
    copies64 = [copy_expr(n, m, "double", backward) for n, m in zip(names, metas)]
    lines, rebased = list(zip(names, exprs)), []
    for group in parts.get("aliases") or []:
        lines = aliased_lines(group, names, metas, lines, default_dtype(parts))
        rebased += rebased_lines(group, names, metas)
        for out, cast in ((copies, None), (copies64, "double")):
            for i, expr in aliased_copies(group, names, metas, cast, backward).items():
                out[i] = expr
    return {
        "names": names,
        "inputs": lines,
        "attribute_lines": attributes,
        "rebased": rebased,
        "args": ", ".join(names),
        "copies": copies,
        "copies64": copies64,
        "model": "Repro(attributes)" if parts["attributes"] else "Repro()",
    }


# Inputs that share memory (fx/aliases.py) are made so in repro.py: views of one input that spans them all, or of a
# buffer made for them; each reference run gets one copy of that memory, the group's copies views of it (a walrus
# in the argument list: the first copy made names it for the rest).
def memory_of(group: dict, names: list, metas: list) -> tuple:
    """(the variable holding the group's memory, the index of the input that is it, or None when none spans it)."""
    for i, offset in zip(group["inputs"], group["offsets"]):
        m = metas[i]
        if aliases.spans(group, m["shape"], m["stride"], offset):
            return names[i], i
    return f"{names[group['inputs'][0]]}_memory", None


def aliased_lines(group: dict, names: list, metas: list, lines: list, default: str = "float32") -> list:
    """lines [(name, expression)] with the group's inputs made views of its memory, the memory first."""
    memory, own = memory_of(group, names, metas)
    members = set(group["inputs"])
    first = min(members)
    made = []
    if own is None:
        m = metas[first]
        device = "" if m.get("device", "cpu") == "cpu" else f", device={m['device']!r}"
        kind = "" if m["dtype"] == default else f", dtype=torch.{m['dtype']}"
        made.append((memory, f"torch.empty({group['numel']}{kind}{device})"))
    else:
        made.append(lines[own])
    for i, offset in zip(group["inputs"], group["offsets"]):
        if i == own:
            continue
        view = _view(memory, metas[i], offset, _base_meta(group, metas, own))
        expr, grad = _without_grad(lines[i][1])
        said = f"  # a view of {memory}, as in the captured call" if own is not None else ""
        made.append((names[i], view + ("" if own is not None else f".copy_({expr})") + grad + said))
    kept = [line for i, line in enumerate(lines) if i not in members]
    at = sum(1 for i in range(first) if i not in members)
    return kept[:at] + made + kept[at:]


def rebased_lines(group: dict, names: list, metas: list) -> list:
    """[(name, expression)] making the group's inputs loaded from repro_inputs.pt views of the one that spans them
    again (torch.load shares their memory but makes each a tensor of its own; fx/aliases.rebased)."""
    memory, own = memory_of(group, names, metas)
    if own is None or any(metas[i].get("requires_grad") for i in group["inputs"]):
        return []
    return [
        (names[i], _view(memory, metas[i], offset, metas[own]))
        for i, offset in zip(group["inputs"], group["offsets"])
        if i != own
    ]


def aliased_copies(group: dict, names: list, metas: list, cast, backward: bool) -> dict:
    """{input index: expression} copying the group for one reference run, the copies sharing one memory."""
    memory, own = memory_of(group, names, metas)
    first = min(group["inputs"])
    # Each input's offset is its group offset wherever repro.py's inputs come from (made here, or loaded from
    # repro_inputs.pt, saved as views of one span): any of them reaches the whole memory.
    whole = memory if own is not None else f"{names[first]}.as_strided(({group['numel']},), (1,), 0)"
    dtype = metas[first].get("dtype", "")
    floating = cast and dtype.startswith(("float", "bfloat")) and dtype != "float64"
    copy = f"{memory}_copy"
    out: dict[int, str] = {}
    for i, offset in sorted(zip(group["inputs"], group["offsets"])):
        how = f"{'detach().' if backward else ''}{'double' if floating else 'clone'}()"
        source = copy if out else f"({copy} := {whole}.{how})"
        expr = source if i == own else _view(source, metas[i], offset, _base_meta(group, metas, own))
        out[i] = expr + (".requires_grad_()" if backward and metas[i].get("requires_grad") else "")
    return out


def _base_meta(group: dict, metas: list, own) -> dict:
    """The shape and stride of what the group's views are taken of: the spanning input, or a flat buffer."""
    return metas[own] if own is not None else {"shape": [group["numel"]], "stride": [1]}


def _view(memory: str, meta: dict, offset: int, base: dict) -> str:
    """memory[a:b, ...] where the input is a plain slice of the spanning input (base), else memory.as_strided()."""
    cut = aliases.slices(
        tuple(base["shape"]), tuple(base["stride"]), tuple(meta["shape"]), tuple(meta["stride"]), offset
    )
    if not cut:
        return f"{memory}.as_strided({tuple(meta['shape'])}, {tuple(meta['stride'])}, {offset})"
    dims = [f"{a or ''}:{'' if b == n else b}" for (a, b), n in zip(cut, base["shape"])]
    while len(dims) > 1 and dims[-1] == ":":
        dims.pop()
    return f"{memory}[{', '.join(dims)}]"


def _without_grad(expr: str) -> tuple:
    """(expr without the requires_grad_() it ends with, that ending or "")."""
    end = ".requires_grad_()"
    return (expr[: -len(end)], end) if expr.endswith(end) else (expr, "")


def default_dtype(parts: dict) -> str:
    """The dtype torch.randn makes where the repro runs (the script's own default, replayed first)."""
    return ((parts.get("context") or {}).get("default_dtype")) or "float32"


def variable_names(names: list, parts: dict) -> list:
    """The placeholders' names as repro.py's variables, none shadowing a name its other lines use."""
    taken = TEMPLATE_NAMES | set(dir(builtins)) | set(re.findall(r"(?:import|as) (\w+)", parts.get("imports") or ""))
    taken |= {sub["cls"] for sub in parts.get("submodules") or []}
    out = []
    for name in names:
        while name in taken or name in out:
            name += "_"
        out.append(name)
    return out


def copy_expr(name: str, meta: dict, cast, backward: bool) -> str:
    """A fresh copy of one input for a reference run (a graph may write to its inputs): floating point ones in
    float64 for the float64 run (cast="double"); leaves again where the backward needs their gradients."""
    if meta.get("kind") != "tensor":
        return name
    dtype = meta.get("dtype", "")
    floating = cast and dtype.startswith(("float", "bfloat")) and dtype != "float64"  # .double() of one is itself
    if backward and meta.get("requires_grad"):
        return f"{name}.detach().{'double' if floating else 'clone'}().requires_grad_()"
    return f"{name}.double()" if floating else f"{name}.clone()"
