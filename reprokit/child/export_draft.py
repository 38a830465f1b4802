"""torch.export.draft_export run where export() raised: every guard, constraint or missing fake kernel it met, with
the user's frame, as plain data (TRIAL_DIR/draft_export.json) and its own report as text (draft_export.txt)."""

from __future__ import annotations

import json
import linecache
import os
import re

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_draft_export(mod, args, kwargs, options: dict, script: str, trial_dir: str) -> str | None:
    """Run draft_export on what export() was given; None, or a note why there is no report."""
    import torch.export

    from reprokit import compat

    try:
        program = torch.export.draft_export(
            mod,
            tuple(args),
            kwargs,
            dynamic_shapes=options.get("dynamic_shapes"),
            strict=bool(options.get("strict", False)),
        )
    except Exception as e:  # draft_export can fail where export did (a missing op); the traceback still says it
        return f"draft_export failed too: {type(e).__name__}: {str(e)[:200]}"
    report = compat.draft_export_report(program)
    if report is None:
        return "draft_export gave no report"
    failures = [failure_record(f, report.str_to_filename, script) for f in report.failures]
    with open(os.path.join(trial_dir, "draft_export.txt"), "w") as f:
        f.write(_ANSI.sub("", str(report)).strip() + "\n")
    with open(os.path.join(trial_dir, "draft_export.json"), "w") as f:
        json.dump({"failures": failures}, f, indent=1, default=str)
    return None


def failure_record(failure, filenames: dict, script: str) -> dict:
    """{"type", "expr", "op", "symbols", "line", "code", "dynamic_shapes"} of one failure of the report."""
    data = failure.data if isinstance(failure.data, dict) else {}
    line, code = user_frame(data.get("user_stack") or [], filenames, script)
    shapes = data.get("new_dynamic_shapes")
    return {
        "type": str(failure.failure_type),
        "expr": data.get("expr"),
        "op": data.get("op"),
        "reason": data.get("reason"),
        "symbols": data.get("symbol_to_sources") or {},
        "line": line,
        "code": code,
        "dynamic_shapes": None if shapes is None else str(shapes),
    }


def user_frame(stack: list, filenames: dict, script: str) -> tuple:
    """The innermost frame of the user's code ("script.py:16", its text): a frame in the script's folder, or one
    whose file the report did not name but whose line is that line of the script (filenames logged before the
    report started listening are missing from it)."""
    root = os.path.dirname(os.path.abspath(script))
    for frame in reversed(stack):
        path = filenames.get(frame.get("filename"))
        lineno, loc = frame.get("line"), (frame.get("loc") or "").strip()
        if path and os.path.abspath(path).startswith(root + os.sep) and "site-packages" not in path:
            return f"{os.path.relpath(path, root)}:{lineno}", linecache.getline(path, lineno).strip() or loc
        if not path and loc and linecache.getline(script, lineno).strip() == loc:
            return f"{os.path.basename(script)}:{lineno}", loc
    return None, None
