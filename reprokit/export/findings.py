"""What an export-stage failure says: the guard or constraint that failed, the user's line, and the fix."""

from __future__ import annotations

import json
import os
import re

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([^\n]+)\n(?:[ \t]+(?![ \t]|File ")([^\n]*))?')
_GUARD = (
    re.compile(r"data-dependent expression (.+?) \(unhinted"),
    re.compile(
        r"Constraints violated \(([^)]*)\)[^\n]*\n\s*- Not all values of [^\n]*? in the specified "
        r"range ([^\n]*?) satisfy the generated guard ([^\n]+)"
    ),
    re.compile(r"Constraints violated \(([^)]*)\)[^\n]*\n\s*-?\s*([^\n]+)"),
    re.compile(r"(Data-dependent branching)"),
    re.compile(r"(?:no|No) (?:fake|abstract|meta) (?:impl|kernel) registered for <CustomOpDef\(([\w:.]+)\)>"),
    re.compile(r"(?:no|No) (?:fake|abstract|meta) (?:impl|kernel)[^\n]*?for (?:operator )?([\w:.]+)"),
)

# (words in the error, the kind of failure, the fix that fits)
FIXES = (
    (
        ("data-dependent", "Data-dependent", "GuardOnDataDependentSymNode"),
        "data-dependent branch",
        "branch with torch.cond(pred, true_fn, false_fn, operands) so both branches are exported; or, when one "
        "branch always holds, state it with torch._check(...) before the branch",
    ),
    (
        ("Constraints violated", "ConstraintViolation", "specialized", "guard on"),
        "dynamic-shape constraint",
        "give the dimension the range the model supports: Dim('name', min=..., max=...) in dynamic_shapes (or "
        "Dim.AUTO to let export infer it)",
    ),
    (
        ("fake impl", "abstract impl", "meta kernel", "register_fake", "FakeTensor", "fake kernel"),
        "custom op without a usable fake kernel",
        "register a fake kernel that returns outputs of the real shapes "
        "and dtypes: @torch.library.register_fake('ns::op')",
    ),
)
# A data-dependent size (not a branch): the value is only used as a size, so a check, not a cond, fixes it.
UNBACKED = (
    "unbacked size",
    "state what the size satisfies with torch._check(...) (e.g. torch._check(n >= 0), "
    "torch._check(n <= x.shape[0])) right after the line that makes it, so export can trace on",
)
# draft_export's failure types, the kind each is (used when the error's words name none)
DRAFT_KINDS = {"DATA_DEPENDENT_ERROR": 0, "GUARD_ADDED": 1, "MISSING_FAKE_KERNEL": 2, "MISMATCHED_FAKE_KERNEL": 2}
_SUGGESTED = re.compile(r"Suggested fixes:\n((?:[ \t]+\S[^\n]*\n?)+)")
_BRANCH = re.compile(r"^(if|elif|while|assert)\b|\bif\b.*\belse\b")


def export_finding(traceback_text: str, script: str, draft: list | None = None) -> dict | None:
    """{"kind", "guard", "line", "code", "fix"} of an export() that raised, from the trial's traceback; with
    draft_export's failures (draft) also "draft": them, and where the traceback lacks it the guard and line."""
    if not traceback_text:
        return None
    index = next((i for i, (words, _k, _f) in enumerate(FIXES) if any(w in traceback_text for w in words)), None)
    primary = primary_failure(draft or [], index)
    if index is None and primary:
        index = DRAFT_KINDS.get(primary["type"])
    kind, fix = (
        FIXES[index][1:]
        if index is not None
        else ("export error", "see the error; torch.export.draft_export(...) lists every problem at once")
    )
    guard = traceback_guard(traceback_text)
    line, code = user_line(traceback_text, script)
    if primary:
        guard = guard or draft_guard(primary)
        line, code = (primary["line"], primary["code"]) if primary.get("line") else (line, code)
    if index == 0 and code and not _BRANCH.search(code):
        kind, fix = UNBACKED
    if index == 2 and primary and primary.get("op"):  # the op draft_export found, in register_fake's spelling
        guard = draft_guard(primary)
        fix = fix.replace("'ns::op'", "'{}::{}'".format(*primary["op"].split(".")[:2]))
    suggested = _SUGGESTED.search(traceback_text)
    if index == 1 and suggested:  # torch's own Dim ranges for this model
        fix += "; torch suggests: " + "; ".join(x.strip() for x in suggested.group(1).splitlines() if x.strip())
    finding = {"kind": kind, "guard": guard, "line": line, "code": code, "fix": fix}
    if draft is not None:
        finding["draft"] = [{k: f.get(k) for k in ("type", "expr", "op", "line", "code")} for f in draft]
    return finding


def traceback_guard(traceback_text: str) -> str | None:
    """The guard or constraint the error names, or None."""
    for pattern in _GUARD:
        m = pattern.search(traceback_text)
        if m and len(m.groups()) == 3:  # a Dim's declared range against the guard the code added
            name, declared, guard = (g.strip() for g in m.groups())
            return f"{name}: {guard} (declared range: {declared})"
        if m:
            return " ".join(g.strip() for g in m.groups() if g).strip()
    return None


def primary_failure(draft: list, index: int | None) -> dict | None:
    """The draft_export failure behind the error: of the error's kind and at a line of the user's, if any."""
    fitting = [f for f in draft if index is None or DRAFT_KINDS.get(f.get("type")) == index] or draft
    return next((f for f in fitting if f.get("line")), fitting[0] if fitting else None)


def draft_guard(failure: dict) -> str | None:
    """A draft_export failure as a guard: its expression with its symbols' sources, or the op it names."""
    if failure.get("expr"):
        symbols = ", ".join(f"{k} = {v}" for k, v in sorted((failure.get("symbols") or {}).items()))
        return failure["expr"] + (f" ({symbols})" if symbols else "")
    return f"torch.ops.{failure['op']}" if failure.get("op") else None


def draft_failures(trial_dir: str) -> list | None:
    """The failures the trial's draft_export recorded (child.export_draft), or None when it did not run."""
    path = os.path.join(trial_dir or "", "draft_export.json")
    if not trial_dir or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f).get("failures") or []


def user_line(traceback_text: str, script: str) -> tuple:
    """The last frame of the user's own code in the text ("script.py:11", source) - the line export traced
    when it failed, named in the error's own "user code" section after the traceback's frames."""
    root = os.path.dirname(os.path.abspath(script))
    found: tuple[str | None, str | None] = (None, None)
    for path, lineno, _func, code in _FRAME.findall(traceback_text):
        if not path.startswith("<") and os.path.abspath(path).startswith(root + os.sep) and "site-packages" not in path:
            found = (f"{os.path.relpath(path, root)}:{lineno}", code.strip())
    return found


def describe(finding: dict) -> str:
    """One sentence for the verdict's message."""
    where = f" at {finding['line']} ({finding['code']})" if finding.get("line") else ""
    guard = f" on {finding['guard']}" if finding.get("guard") else ""
    return f"torch.export fails: {finding['kind']}{guard}{where}. Fix: {finding['fix']}"


_CPP_ERROR = re.compile(r"^(\S+?):(\d+):\d+: error: (.+)$\n^\s*\d+\s*\|\s*(.*)$", re.M)


def cpp_compile_error(text: str) -> str | None:
    """A C++ compile error reduced to its first `error:` line and the generated line it points at."""
    m = _CPP_ERROR.search(text or "")
    if not m:
        return None
    path, lineno, error, code = m.groups()
    return f"C++ compile error at {os.path.basename(path)}:{lineno}: {error.strip()} | {code.strip()}"
