"""What an export-stage failure says: the guard or constraint that failed, the user's line, and the fix."""
from __future__ import annotations

import os
import re
from typing import Optional

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([^\n]+)\n[ \t]+([^\n]*)')
_GUARD = (re.compile(r"data-dependent expression (.+?) \(unhinted"),
          re.compile(r"Constraints violated \(([^)]*)\)[^\n]*\n(?:[^\n]*\n)?\s*-?\s*([^\n]+)"),
          re.compile(r"(Data-dependent branching)"),
          re.compile(r"(?:no|No) (?:fake|abstract|meta) (?:impl|kernel)[^\n]*?for (?:operator )?([\w:.]+)"))

# (words in the error, the kind of failure, the fix that fits)
FIXES = (
    (("data-dependent", "Data-dependent", "GuardOnDataDependentSymNode"), "data-dependent branch",
     "branch with torch.cond(pred, true_fn, false_fn, operands) so both branches are exported; or, when one "
     "branch always holds, state it with torch._check(...) before the branch"),
    (("Constraints violated", "ConstraintViolation", "specialized", "guard on"), "dynamic-shape constraint",
     "give the dimension the range the model supports: Dim('name', min=..., max=...) in dynamic_shapes (or "
     "Dim.AUTO to let export infer it)"),
    (("fake impl", "abstract impl", "meta kernel", "register_fake", "FakeTensor"), "custom op without a usable "
     "fake kernel", "register a fake kernel that returns outputs of the real shapes and dtypes: "
     "@torch.library.register_fake('ns::op')"),
)


def export_finding(traceback_text: str, script: str) -> Optional[dict]:
    """{"kind", "guard", "line", "code", "fix"} of an export() that raised, from the trial's traceback."""
    if not traceback_text:
        return None
    kind, fix = next(((k, f) for words, k, f in FIXES if any(w in traceback_text for w in words)),
                     ("export error", "see the error; torch.export.draft_export(...) lists every problem at once"))
    guard = None
    for pattern in _GUARD:
        m = pattern.search(traceback_text)
        if m:
            guard = " ".join(g.strip() for g in m.groups() if g).strip()
            break
    line, code = user_line(traceback_text, script)
    return {"kind": kind, "guard": guard, "line": line, "code": code, "fix": fix}


def user_line(traceback_text: str, script: str) -> tuple:
    """The last frame of the user's own code in the text ("script.py:11", source) - the line export traced
    when it failed, named in the error's own "user code" section after the traceback's frames."""
    root = os.path.dirname(os.path.abspath(script))
    found = (None, None)
    for path, lineno, _func, code in _FRAME.findall(traceback_text):
        if os.path.abspath(path).startswith(root + os.sep) and "site-packages" not in path:
            found = (f"{os.path.relpath(path, root)}:{lineno}", code.strip())
    return found


def describe(finding: dict) -> str:
    """One sentence for the verdict's message."""
    where = f" at {finding['line']} ({finding['code']})" if finding.get("line") else ""
    guard = f" on {finding['guard']}" if finding.get("guard") else ""
    return f"torch.export fails: {finding['kind']}{guard}{where}. Fix: {finding['fix']}"


_CPP_ERROR = re.compile(r"^(\S+?):(\d+):\d+: error: (.+)$\n^\s*\d+\s*\|\s*(.*)$", re.M)


def cpp_compile_error(text: str) -> Optional[str]:
    """A C++ compile error reduced to its first `error:` line and the generated line it points at."""
    m = _CPP_ERROR.search(text or "")
    if not m:
        return None
    path, lineno, error, code = m.groups()
    return f"C++ compile error at {os.path.basename(path)}:{lineno}: {error.strip()} | {code.strip()}"
