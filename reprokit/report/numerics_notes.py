"""What ISSUE.md and the command line say of wrong numbers: compiled the more accurate one (exit 4), inductor's
numerics modes and their workaround, the first diverging node beside the lowering named."""

from __future__ import annotations

from reprokit.data.verdict import Verdict


def numerics_lines(v: Verdict) -> list:
    """ISSUE.md's lines on wrong numbers: compiled the closer one, the numerics modes, the first diverging node."""
    lines = []
    if v.run.more_accurate:
        lines.append(
            f"compiled is the more accurate: graph {v.run.more_accurate.get('graph')} differs from eager, and compiled is "
            "the closer of the two to a float64 reference; " + eager_bits(v)
        )
    if v.evidence.numerics:
        lines.append(v.evidence.numerics["text"])
        if v.evidence.numerics.get("workaround"):
            why = (
                "the weakest numerics mode that removes it"
                if v.evidence.numerics.get("cause") == "numerics"
                else "every op runs as ATen runs it eagerly: slower"
            )
            lines.append(f"workaround: `{v.evidence.numerics['workaround']}` ({why})")
    d = v.evidence.divergence or {}
    if d.get("node"):
        agree = {
            "agrees": "; agrees with the lowering counter",
            "feeds": "; the lowering counter named the op that feeds it, computed in its kernel (as an output of its "
            "own, that op agrees)",
            "differs": "; the lowering counter named another op: this node's difference may not reach the output",
        }
        lines.append(
            f"first diverging node: `{d['code']}` (node {d['index']} of the {d['of']} the diverging output is computed "
            f"from, beyond {'1e-3' if d.get('level') == 'tolerance' else 'rounding'}){agree.get(d.get('lowering') or '', '')}"
        )
    elif d:
        lines.append(f"first diverging node: none found ({d.get('why')})")
    return lines


def eager_bits(v: Verdict) -> str:
    """What gives eager's bits back: the config flips found (and the numerics mode), and the lowering named."""
    ways = [f"`{k}={val!r}`" for k, val in (v.config or {}).items()]
    numerics = v.evidence.numerics or {}
    if numerics.get("cause") == "numerics":  # a strict mode; the fallback to ATen would give any op eager's bits
        ways.append(f"`{numerics['workaround']}`")
    text = f"{' or '.join(ways)} makes compiled match eager" if ways else "no setting tried makes compiled match eager"
    sub = v.subsystem or {}
    if sub.get("name") == "lowerings":
        op = str(sub.get("detail") or "").split(" ")[0]
        text += f" (lowering `{op}`, application #{sub.get('application')} of {sub.get('applications')})"
    return text


def more_accurate_line(v: Verdict) -> str:
    """The command line's one line for exit 4."""
    where = f" in graph {v.run.more_accurate.get('graph')}" if v.run.more_accurate else ""
    tail = f"; see ISSUE.md in {v.run.tarball}" if v.run.tarball else ""
    return f"compiled is more accurate than eager (float64 reference){where}; {eager_bits(v)}{tail}"
