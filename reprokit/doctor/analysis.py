"""reprokit doctor's domain: turn what Dynamo recorded in one eager and one compiled run into findings with fixes.

Pure: reads the plain observations a trial child wrote (observed.json), imports no torch.
"""

from __future__ import annotations

import dataclasses
import os
import re

from reprokit.data.doctor import DoctorReport, Finding
from reprokit.doctor.speed import measure_speed, speed_findings
from reprokit.doctor.wrappers import compiled_counts, compiled_nothing_findings

# Dynamo names the code after a graph break torch_dynamo_resume_in_<function>_at_<line>.
RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")


def user_function(co_name: str) -> str:
    """The user's function a (possibly resume) frame belongs to."""
    m = RESUME.match(co_name or "")
    return m.group(1) if m else (co_name or "")


# -- graph breaks --------------------------------------------------------------------------------------


def _user_frame(stack: list, user_root: str) -> list | None:
    """The innermost frame of the break inside the user's own files; None when all are torch's or the
    standard library's (the break is inside torch)."""
    for f in reversed(stack or []):
        path = os.path.abspath(f[0]) if not os.path.isabs(f[0]) else f[0]
        if path.startswith(user_root + os.sep) or os.path.dirname(path) == user_root:
            return f
    return None


def graph_break_fix(gb_type: str, reason: str, code: str) -> tuple[str, str]:
    """(fix in the user's terms, owner) for one kind of graph break."""
    text = f"{gb_type}\n{reason}"
    if re.search(r"\bprint\s*\(", code) or "`print`" in text:
        return (
            "remove the print from the compiled code, or guard it: `if not torch.compiler.is_compiling(): print(...)`",
            "user",
        )
    if ".item()" in code or "Tensor.item" in text:
        return (
            "keep the value a tensor instead of calling .item() (e.g. use it in tensor ops), or set "
            "`torch._dynamo.config.capture_scalar_outputs = True`",
            "user",
        )
    if ".tolist()" in code or "tolist" in text:
        return (
            "keep the data a tensor instead of .tolist() inside the compiled code, or move the call outside it",
            "user",
        )
    if "Data-dependent branching" in text or (
        "data-dependent" in text.lower() and code.lstrip().startswith(("if ", "while ", "elif "))
    ):
        return (
            "replace the tensor-dependent `if` with `torch.where(cond, a, b)` (both branches computed) or "
            "`torch.cond(pred, true_fn, false_fn, operands)`",
            "user",
        )
    if re.search(r"\b(logging|logger|log)\.", code):
        return (
            "move the logging call out of the compiled code, or add it to "
            "`torch._dynamo.config.reorderable_logging_functions`",
            "user",
        )
    owner = "compiler" if "report an issue" in text.lower() else "user"
    first_hint = next(
        (ln.strip()[len("Hint:") :].strip() for ln in reason.splitlines() if ln.strip().startswith("Hint:")), ""
    )
    return (
        first_hint or "rewrite this line so Dynamo can trace it"
    ) + "; then compile with `fullgraph=True` so the next break is an error, not a silent split", owner


def graph_break_findings(obs: dict, user_root: str, sites: list | None = None) -> list[Finding]:
    """One finding per place and kind of break, at the user's frame that led into it. A break inside torch (no
    frame of the user's on its stack) is placed at the user's torch.compile line and marked as torch's."""
    groups: dict = {}
    for b in obs.get("breaks") or []:
        frame = _user_frame(b.get("stack") or [], user_root)
        if frame is None:
            frame = _inside_torch(b, sites or [])
        key = (frame[0], frame[1], b.get("gb_type")) if frame else (None, None, b.get("gb_type"))
        g = groups.setdefault(key, {"break": b, "frame": frame, "count": 0})
        g["count"] += 1
    metrics = obs.get("metrics") or []
    out = []
    for (path, line, gb_type), g in groups.items():
        b, frame = g["break"], g["frame"]
        code = frame[3] if frame else ""
        fn = (b.get("frame") or [None, None, "?"])[2]
        base = user_function(fn)
        graphs = sum(
            1
            for m in metrics
            if (m.get("graph_op_count") or 0) > 0 and m.get("co_name") and user_function(m["co_name"]) == base
        )
        fix, owner = graph_break_fix(gb_type or "", b.get("reason") or "", code)
        reason_line = _headline(b.get("reason") or gb_type or "")
        if frame and len(frame) > 4:  # inside torch: torch's to fix, placed where the user compiled it
            owner, reason_line, code = "compiler", f"inside torch ({frame[4]}): {reason_line}", ""
            fix = f"nothing on your line: the break is in torch's own code ({frame[4]}; torch's hint: {fix.split('; then compile')[0]})"
        out.append(
            Finding(
                kind="graph_break",
                title=f"graph break: {reason_line}",
                file=path,
                line=line,
                code=code,
                count=g["count"],
                owner=owner,
                fix=fix,
                detail=f"splits `{base}` ({graphs} graphs compiled for it); seen {g['count']} time(s) while compiling",
            )
        )
    return sorted(out, key=lambda f: (f.file or "", f.line or 0))


def _inside_torch(b: dict, sites: list) -> list | None:
    """[file, line, name, code, where in torch] for a break with no frame of the user's: the compile site of
    the callable it broke (the first one when that is unknown), and the innermost frame as torch's place."""
    stack = b.get("stack") or []
    inner = next((f for f in reversed(stack) if f"{os.sep}torch{os.sep}" in f[0]), stack[-1] if stack else None)
    where = f"{os.path.basename(inner[0])}:{inner[1]}" if inner else "torch"
    site = sites[0] if sites else None
    return [site["file"], site["line"], "", "", where] if site else [None, None, "", "", where]


def _headline(reason: str) -> str:
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    for ln in lines:
        if not ln.startswith("Encountered graph break when attempting"):
            return ln[:200]
    return lines[0][:200] if lines else "unknown"


# -- recompilations and fall-backs ---------------------------------------------------------------------

SIZE_GUARD = re.compile(r"tensor '([^']+)' size mismatch at index (\d+)\. expected (\d+), actual (\d+)")
SCALAR_GUARD = re.compile(r"^(?:L\['([^']+)'\]|(\w+))\s*==\s*(\S+)")
USER_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _guard_text(reason: str) -> str:
    return re.sub(r"^\d+/\d+:\s*", "", reason.strip().splitlines()[0]) if reason.strip() else ""


def recompile_findings(obs: dict, compile_sites: list) -> list[Finding]:
    """One finding per user function: its frames (and the resume frames its graph breaks made) recompiled."""
    limit = obs.get("recompile_limit") or 8
    out = []
    for (path, name), g in _recompile_groups(obs.get("metrics") or []).items():
        if not g["reasons"]:
            continue
        site = next((c for c in compile_sites if c["label"] == name), compile_sites[0] if compile_sites else None)
        where = f" at {os.path.basename(site['file'])}:{site['line']}" if site else ""
        out.append(_recompile_finding(path, name, g, where, limit))
    return out


def _recompile_groups(metrics: list) -> dict:
    """(file, user function) -> its recompile reasons (readable and raw), first line, and whether it hit the limit."""
    frames: dict = {}  # frame id ("0" of "0/3") -> (file, first line, function)
    for m in metrics:
        if m.get("co_name") and m.get("compile_id"):
            frames[m["compile_id"].split("/")[0]] = (m["co_filename"], m["co_firstlineno"], m["co_name"])
    limited = {
        m["compile_id"].split("/")[0]
        for m in metrics
        if m.get("compile_id") and "recompile limit" in (m.get("fail_reason") or "").lower()
    }
    groups: dict = {}
    for m in metrics:
        fid = (m.get("compile_id") or "").split("/")[0]
        if fid not in frames or not (m.get("recompile_reason") or fid in limited):
            continue
        path, first, name = frames[fid]
        g = groups.setdefault((path, user_function(name)), {"reasons": [], "raw": [], "first": None, "hit": False})
        if not RESUME.match(name):
            g["first"] = first
        if m.get("recompile_reason"):
            g["reasons"].append(_guard_text(m["recompile_reason"]))
            g["raw"].append(m["recompile_reason"])
        g["hit"] = g["hit"] or fid in limited
    return groups


def _recompile_finding(path: str, name: str, g: dict, where: str, limit: int) -> Finding:
    """What the guards that failed say changes between calls (a size, a Python value, other), and its fix."""
    reasons = g["reasons"]
    line, file = g["first"], path
    tail = f"; the recompile limit ({limit}) was reached, so `{name}` now runs in eager for good" if g["hit"] else ""
    sizes = [m for m in map(SIZE_GUARD.search, reasons) if m]
    scalars = [m for m in map(SCALAR_GUARD.match, reasons) if m]
    if sizes:
        var, dim = sizes[0].group(1), sizes[0].group(2)
        seen = sorted(
            {int(x.group(3)) for x in sizes if x.group(1) == var}
            | {int(x.group(4)) for x in sizes if x.group(1) == var}
        )
        if g["hit"] or len(seen) > 4:
            fix = (
                f"compile with `dynamic=True`{where}, or call `torch._dynamo.mark_dynamic({var}, {dim})` on "
                f"the input before calling `{name}`"
            )
        else:
            fix = (
                f"pad or bucket `{var}` dim {dim} to a few sizes (seen: {', '.join(map(str, seen))}), or call "
                f"`torch._dynamo.mark_dynamic({var}, {dim})` on the input before calling `{name}`"
            )
        title = f"`{name}` recompiled {len(reasons)}x: tensor '{var}' changes size at dim {dim}"
    elif scalars:
        x = scalars[0]
        var, value = x.group(1) or x.group(2), x.group(3)
        at = [m for m in (USER_LINE.findall(r) for r in g["raw"]) if m]
        if at:
            file, line = at[0][-1][0], int(at[0][-1][1])
        if value in ("True", "False"):
            fix = (
                f"`{var}` flips between True and False and each value gets its own graph; if it changes every "
                f"call, pass it as a bool tensor and use `torch.where`"
            )
        else:
            fix = (
                f"pass `{var}` as a tensor (e.g. `torch.tensor({var})`) instead of a Python number that "
                f"changes between calls, or compile with `dynamic=True`{where}"
            )
        title = f"`{name}` recompiled {len(reasons)}x: the Python value `{var}` is baked into the graph"
    else:
        fix = f"keep the guarded value stable between calls, or compile with `dynamic=True`{where} if it is a shape"
        title = f"`{name}` recompiled {len(reasons)}x: {reasons[0][:160]}"
    return Finding(
        kind="recompile_limit" if g["hit"] else "recompile",
        title=title + tail,
        file=file,
        line=line,
        count=len(reasons),
        fix=fix,
        owner="user",
        detail="guards that failed: " + "; ".join(dict.fromkeys(reasons))[:600],
    )


def fallback_findings(obs: dict, script_lines: dict, user_backend: str | None) -> list[Finding]:
    """Frames that ran in eager because an error was suppressed (suppress_errors) rather than raised."""
    out = []
    for m in obs.get("metrics") or []:
        ftype = m.get("fail_type")
        if not ftype or "recompile limit" in (m.get("fail_reason") or "").lower():
            continue
        if not m.get("config_suppress_errors"):
            continue
        reason = (m.get("fail_reason") or "").strip().splitlines()[0].split(" Command:")[0][:300]
        where = next(
            (
                (p, n)
                for p, lines in script_lines.items()
                for n, text in enumerate(lines, 1)
                if "suppress_errors" in text and "True" in text
            ),
            (None, None),
        )
        # torch's own compiler failing is torch's limitation; the user's own backend failing is theirs
        owner = "user" if user_backend not in (None, "inductor") and ftype == "BackendCompilerFailed" else "compiler"
        out.append(
            Finding(
                kind="fallback",
                title=f"`{m.get('co_name')}` silently ran in eager: {ftype}: {reason}",
                file=m.get("co_filename"),
                line=m.get("co_firstlineno"),
                owner=owner,
                fix=(
                    "remove `suppress_errors = True`"
                    + (f" ({os.path.basename(where[0])}:{where[1]})" if where[0] else "")
                    + " so the error is raised, then `reprokit bisect` the script to isolate it"
                ),
                detail="torch._dynamo.config.suppress_errors turned a compile error into eager execution",
            )
        )
    return out


def analyze(
    script: str, argv: tuple, eager: dict, compiled: dict, compiled_outcome: dict, script_lines: dict
) -> DoctorReport:
    """Every finding of one eager and one compiled run of the script, with the speed verdict."""
    user_root = os.path.dirname(os.path.abspath(script))
    sites = [
        {
            "label": c["label"],
            "file": c["site"][0],
            "line": c["site"][1],
            "graphs": compiled_counts(c)[0],
            "ops": compiled_counts(c)[1],
        }
        for c in compiled.get("callables") or []
        if c.get("site")
    ]
    findings: list[Finding] = []
    kind = compiled_outcome.get("kind", "pass")
    if kind != "pass":
        findings.append(
            Finding(
                kind="compiled_failure",
                owner="compiler",
                title=f"the compiled run fails ({kind}): {compiled_outcome.get('message', '')}",
                fix=f"run `reprokit bisect {os.path.basename(script)}` to isolate it",
            )
        )
    findings += compiled_nothing_findings(compiled, script_lines)
    findings += graph_break_findings(compiled, user_root, sites)
    findings += recompile_findings(compiled, sites)
    findings += fallback_findings(compiled, script_lines, compiled_outcome.get("user_backend"))
    speed = measure_speed(eager, compiled)
    findings += speed_findings(speed, findings, sites)
    counters = compiled.get("counters") or {}
    graphs = sum(1 for m in compiled.get("metrics") or [] if (m.get("graph_op_count") or 0) > 0)
    return DoctorReport(
        script=script,
        argv=tuple(argv),
        findings=[f.to_dict() for f in findings],
        speed=dataclasses.asdict(speed),
        graphs=graphs,
        frames=counters.get("frames") or {},
        compile_sites=sites,
        compiled_outcome=kind,
        unobserved=list(compiled.get("unattached") or []),
    )
