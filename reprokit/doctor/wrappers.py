"""What each compiled callable compiled, and the compiled wrapper (DDP, FSDP) whose forward Dynamo skips, so
that nothing of the model reaches the compiler. Pure: reads observed.json's plain data."""

from __future__ import annotations

from reprokit.data.doctor import Finding

# Wrappers whose forward Dynamo does not trace when the wrapper itself is compiled, and the fix for each:
# compile the module first, then wrap it.
WRAPPER_FIXES = {
    "DistributedDataParallel": "DDP(torch.compile(model))",
    "FullyShardedDataParallel": "FSDP(torch.compile(model)), or compile each block before `fully_shard`",
    "DataParallel": "DataParallel(torch.compile(model))",
}


def compiled_counts(callable_record: dict) -> tuple[int, int]:
    """(graphs, ops) one compiled callable's router compiled; ops are the graphs' call_function nodes."""
    counts = callable_record.get("counts") or {}
    return int(counts.get("graphs") or 0), int(counts.get("ops") or 0)


def compiled_nothing_findings(obs: dict, script_lines: dict) -> list[Finding]:
    """A compiled callable that ran and compiled no op: said at the user's torch.compile line, with the fix
    for a wrapper Dynamo skips (DDP, FSDP) or a pointer to the breaks that left nothing to compile."""
    out = []
    for c in obs.get("callables") or []:
        graphs, ops = compiled_counts(c)
        calls = len(c.get("seconds") or [])
        if not c.get("counts") or ops or not calls:
            continue
        label, site = c.get("label") or "?", c.get("site") or [None, None]
        code = _line(script_lines, site[0], site[1])
        what = "no graph reached the compiler" if not graphs else f"{graphs} graph(s) of no op"
        fix = WRAPPER_FIXES.get(label)
        if fix:
            title = f"torch.compile of {label} skips its forward, so all {calls} calls ran eager ({what})"
            how = f"compile the module, then wrap it: `{fix}`"
            detail = (
                f"Dynamo does not trace {label}'s own forward; the model inside it is never compiled, and the graph "
                "breaks below are where Dynamo gave up"
            )
        else:
            title = f"{label} ran {calls} calls eager ({what})"
            how, detail = "fix the graph breaks below, or compile the function that does the work", ""
        title = f"nothing was compiled: {title}"
        out.append(Finding("compiled_nothing", title, site[0], site[1], code, calls, detail=detail, fix=how))
    return out


def _line(script_lines: dict, path: str | None, line: int | None) -> str:
    lines = script_lines.get(path) or []
    return lines[line - 1].strip() if line and 0 < line <= len(lines) else ""
