"""What ISSUE.md says of a bisect verdict, sentence by sentence: the repro, what was isolated, the data, the tarball."""

from __future__ import annotations

from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict

# What each kind of repro is, in the words ISSUE.md uses.
REPRO_KINDS = {
    "graph": "the failing FX graph alone",
    "graph_in_context": "the failing FX graph replayed with the script's call-time context (autocast, grad mode, "
    "dtype), the ops it registered and the compiler hooks it set",
    "graph_in_script": "the FX graph minified inside the running script, whose own check decided; standalone, it "
    "checks compiled against eager and a float64 reference",
    "source": "the script itself, reduced statement by statement",
    "warm_cache": "the script itself, with a few lines at its top that run it twice in fresh interpreters on one new "
    "inductor cache",
}

EXPORT_STAGES = ("export", "decompose", "aoti_compile", "aoti_run")  # the export path's own (#20)


def issue_notes(
    v: Verdict, numerics: list, repro: str | None, inline: str | None, tlparse_at: str | None, data_attached: bool
) -> dict:
    """ISSUE.md's sentences beside the summary, as its template names them: what was isolated (numerics: the lines
    of report/numerics_notes.py), the repro and its data, and what the tarball holds."""
    data = data_note(v, data_attached)
    return {
        "isolated": isolated_lines(v, numerics),
        "repro_note": repro_note(v, repro, inline) + (f". {data}" if data else ""),
        "attached": attached_note(v, tlparse_at),
    }


def repro_note(v: Verdict, repro: str | None, inline: str | None) -> str:
    """What ISSUE.md says about the repro: what kind it is, its size and whether it was verified."""
    if not repro or not v.repro.verified and v.repro.attempts:
        tried = "; ".join(f"{a['kind']}: {a['result']}" for a in v.repro.attempts or [])
        return (
            "no verified standalone repro"
            + (f" ({tried})" if tried else "")
            + "; the original script is in the attached tarball"
        )
    kind = REPRO_KINDS.get(v.repro.kind or "", "")
    note = (
        f"{kind + ', ' if kind else ''}{v.repro.nodes_after} of {v.repro.nodes_before} "
        f"{v.repro.unit or 'FX nodes'}, "
        + (
            (
                "verified: a cold run passes and the warm run after it fails the same way, each in a fresh interpreter"
                if v.repro.kind == "warm_cache"
                else f"verified to fail the same way in {reliability(v) or fresh_interpreters(v.repro.fresh_runs)}"
            )
            if v.repro.verified
            else f"NOT verified: it gave {Signature.from_dict(v.repro.signature).short_within() if v.repro.signature else 'nothing'}"
        )
    )
    return note if inline else note + "; too long to show here, it is in the attached tarball"


def reliability(v: Verdict) -> str:
    """The repro's measured rate in words ("3 of 3 runs in fresh interpreters: ..."); "" before it was measured."""
    rate = v.repro.reliability
    if not rate:
        return ""
    return (
        f"{rate['failed']} of {rate['runs']} runs in fresh interpreters: run up to {rate['most']} times, it stops at "
        f"{rate['floor']} failures, and fewer would not be called verified"
    )


def fresh_interpreters(runs: int | None) -> str:
    """How many fresh interpreters ran repro.py, in words (None: a verdict from before they were counted, two)."""
    return "a fresh interpreter" if runs == 1 else f"{'two' if runs in (None, 2) else runs} fresh interpreters"


def isolated_lines(v: Verdict, numerics: list) -> list:
    """ISSUE.md's list of what the bisect isolated besides the stage; numerics: numerics_notes.numerics_lines(v)."""
    iso = v.isolation
    isolated = []
    if iso.graph is not None:
        isolated.append(f"graph: {iso.graph} of {iso.graph_count}")
    if v.config:
        isolated.append("config flips that make it pass: " + ", ".join(f"`{k}={val!r}`" for k, val in v.config.items()))
    if v.subsystem:
        stabilities: dict[bool | None, str] = {True: "", False: " (boundary not stable on re-run)"}
        stability = stabilities.get(v.subsystem.get("confirmed"), " (not re-run)")
        isolated.append(
            f"subsystem: `{v.subsystem['name']}` application #{v.subsystem['application']} of "
            f"{v.subsystem.get('applications')}: `{v.subsystem.get('detail')}`{stability}"
        )
    isolated.extend(numerics)
    if iso.cuda_fault:
        isolated.append(cuda_fault_line(v))
    for o in iso.other_failures or []:
        # One met by reprokit's own replay of the graph, outside the script, is said so: not a second bug of yours.
        where = (
            (
                " (met when reprokit compiled the captured graph alone, outside the script: it may come from that "
                "replay, not from your program)"
            )
            if o.get("replay")
            else ""
        )
        isolated.append(
            f"a different failure met on the way: {Signature.from_dict(o['signature']).short_within()}{where}"
        )
    # an export-stage failure (#20): its guard, line and fix apart
    if iso.export and iso.export.get("kind"):
        isolated.extend(export_lines(iso.export))
    elif iso.failing_stage in EXPORT_STAGES and v.message:  # the export path (#20)
        isolated.append(v.message)  # the guard, the user's line and the fix; or the compile error's one line
    return isolated


def export_lines(finding: dict) -> list:
    """ISSUE.md's lines for an export-stage failure: what failed, the guard, the user's line, the fix, the report."""
    lines = [f"torch.export fails: {finding['kind']}"]
    if finding.get("guard"):
        lines.append(f"guard or constraint that failed: `{finding['guard']}`")
    if finding.get("line"):
        lines.append(f"the line that added it: `{finding['line']}`: `{finding.get('code') or ''}`")
    lines.append(f"fix: {finding['fix']}")
    problems = finding.get("draft") or []
    if finding.get("report") and problems:  # told here: a reader of the issue does not have the tarball
        said = "; ".join(f"{p['type']}" + (f" at `{p['line']}`" if p.get("line") else "") for p in problems)
        lines.append(f"draft_export finds {len(problems)} problem{'s' * (len(problems) > 1)}: {said}")
    return lines


def data_note(v: Verdict, attached: bool) -> str:
    """What ISSUE.md says of real input data: none, inline, attached, or needed but not attached (and why)."""
    if v.repro.inputs in (None, "synthetic") or not v.repro.inputs_note:
        return ""
    if v.repro.inputs == "file" and not attached:
        return (
            f"Real data needed: {v.repro.inputs_note}. The data file is not attached (it may hold activations "
            f"or weights); `reprokit pack --include-data RUN_DIR` attaches it."
        )
    return f"Real data included: {v.repro.inputs_note}."


def attached_note(v: Verdict, tlparse_at: str | None) -> str:
    """What the attached tarball holds beyond this text, in one sentence's words."""
    parts = []
    if v.repro.test_repro:
        parts.append(
            "the repro as a failing test in PyTorch's style (`TestCase`, `run_tests`: it asserts the correct "
            "behaviour, so it passes once the bug is fixed; " + (test_repro_note(v) or "") + ")"
        )
    parts.append("the original script, the decisive runs' full logs")
    if tlparse_at:
        parts.append("tlparse's report of the failing run's TORCH_TRACE log")
    return ", ".join(parts) + ", the environment and a manifest of what was redacted"


def test_repro_note(v: Verdict) -> str | None:
    """What ISSUE.md says of test_repro.py: how its fresh-interpreter run failed, or None when there is none."""
    if not v.repro.test_repro:
        return None
    if v.repro.test_repro_verified:
        return f"in a fresh interpreter it fails the same way, `{v.repro.test_repro_failure}`"
    return f"NOT verified: in a fresh interpreter it gave `{v.repro.test_repro_failure or 'nothing'}`"


def cuda_fault_line(v: Verdict) -> str:
    """The CUDA fault, its kernel where one was named, and how the trials after it launched."""
    fault = v.isolation.cuda_fault
    assert fault is not None  # said only of a verdict with a CUDA fault
    kernel = fault.get("kernel")
    line = f"CUDA fault: {fault['fault']}" + (f" in kernel `{kernel}`" if kernel else ", named by no kernel")
    if not fault.get("launch_blocking"):
        return line
    line += "; every trial after the original ran with `CUDA_LAUNCH_BLOCKING=1`"
    named_by = fault.get("named_by") or ("launch" if kernel else None)
    said = fault.get("sanitizer") or {}
    if named_by == "launch":
        line += ", so the fault surfaced at the kernel that raised it"
    elif named_by == "message":
        line += (
            "; it surfaced in no kernel, which is named by the message its assert printed, found in that "
            "kernel's generated source"
        )
    elif named_by == "sanitizer":
        line += f"; it surfaced in no kernel, which compute-sanitizer's memcheck named ({said.get('error')})"
    # repro.py sets it where it is a graph's repro (templates/repro.py.j2), not the export path's
    return line + ("" if v.repro.kind in ("source", "export_graph") else " (repro.py sets it too)")
