"""The bisect's summary: its ladder as a table, then what it isolated, one fact a line, then the run's tally."""

from __future__ import annotations

import json

from reprokit.cli_tally import Tally, tally_table
from reprokit.data.budget import said
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.verdict import Verdict


def summary_table(v: Verdict, tally: Tally | None = None) -> str:
    """The ladder as a table, then what the bisect isolated, one fact a line; then, given the CLI's tally, every
    trial and second of the run by phase (the verdict's own count stops at the verdict)."""
    lines = _ladder_rows(v)
    lines.append("")
    lines += [f"{k:<26} {val}" for k, val in _facts(v) if val is not None]
    lines += _other_lines(v)
    if v.run.versions:  # reprokit versions: the news that matters most goes first
        lines.insert(0, f"{v.run.versions['summary']}\n" if v.run.versions.get("fixed_in") else "")
        lines.append(f"{'torch releases':<26} {v.run.versions['summary']}")
    if tally is not None:
        lines += ["", tally_table(tally)]
        if v.repro.test_repro_seconds and any(p.name == "repro" for p in tally.phases):
            # Not a trial (a plain interpreter run once), so no row of its own: its seconds are the repro phase's.
            lines.append(f"repro's seconds include one run of test_repro.py: {v.repro.test_repro_seconds:.1f} s")
    return "\n".join(lines).lstrip("\n")


def _ladder_rows(v: Verdict) -> list:
    """The ladder: stage, result, seconds, aligned under a rule."""
    rows = [("stage", "result", "seconds")]
    for r in v.isolation.ladder:
        rows.append((STAGE_TITLES.get(r["stage"], r["stage"]), _stage_result(v, r), f"{r['seconds']:.1f}"))
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(width[i]) for i, c in enumerate(r)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in width))
    return lines


def _facts(v: Verdict) -> list:
    """What the bisect isolated, one (name, value) a line; None values are left out."""
    iso = v.isolation
    return [
        ("failing stage", iso.failing_stage),
        ("failure", iso.kind or (iso.signature or {}).get("kind")),
        ("graph", None if iso.graph is None else f"{iso.graph} of {iso.graph_count}"),
        ("config that makes it pass", json.dumps(v.config) if v.config else None),
        (
            "subsystem",
            None
            if not v.subsystem
            else f"{v.subsystem['name']} #{v.subsystem['application']}: {v.subsystem['detail']}",
        ),
        (
            "fake kernel",
            None
            if not iso.meta_kernel
            else f"{iso.meta_kernel['op'] or '?'}: {iso.meta_kernel['mismatch'] or 'fake and real kernels disagree'}",
        ),
        (
            "memory",
            None
            if not iso.memory
            else f"compiled peak {_mib(iso.memory['compiled_peak_mib'])}, eager "
            f"peak {_mib(iso.memory['eager_peak_mib'])} ({iso.memory['measure']})",
        ),
        ("inductor pieces", _pieces(iso.inductor_pieces)),
        ("export guard", iso.export and iso.export.get("guard")),
        ("user line", iso.export and iso.export.get("line") and f"{iso.export['line']}: {iso.export['code']}"),
        (
            "cuda fault",
            None
            if not iso.cuda_fault
            else f"{iso.cuda_fault['fault']} in {iso.cuda_fault['kernel'] or 'no named kernel'}; "
            f"device afterwards: {iso.cuda_fault.get('device_check') or 'not checked'}",
        ),
        ("aoti kernel", iso.aoti_kernel and f"{iso.aoti_kernel['kernel']} (launched, never finished)"),
        ("speed", (iso.speed or {}).get("original")),
        (
            "modes that pass",
            None
            if iso.modes is None
            else ", ".join(
                f"mode={r['mode'] or 'default'} dynamic={r['dynamic']}" for r in iso.modes if r["kind"] == "pass"
            )
            or "none",
        ),
        ("repro", v.repro.path and f"{v.repro.path} ({v.repro.kind or 'not verified'})"),
        (
            "no repro because",
            None
            if v.repro.verified or not v.repro.attempts
            else "; ".join(f"{a['kind']}: {a['result']}" for a in v.repro.attempts),
        ),
        ("tarball", v.run.tarball),
        ("budget", _budget(v.run.budget)),
        ("time plan", _time_plan(v.run.time_plan)),
        ("verdict after", f"{iso.trials} trials, {iso.seconds:.1f} s"),
    ]


def _other_lines(v: Verdict) -> list:
    """Other failures seen, runs that failed otherwise, and the verdict's message."""
    iso = v.isolation
    lines = []
    if iso.other_failures:
        lines.append(
            f"{'other failures seen':<26} "
            + "; ".join(
                f"{o['signature'].get('exc_type') or o['signature']['kind']}: {o['signature'].get('message', '')[:50]}"
                for o in iso.other_failures
            )
        )
    if iso.unsteady:
        lines.append(f"{'runs that failed otherwise':<26} {iso.unsteady}")
    if v.message:
        lines.append(v.message)
    return lines


def _stage_result(v: Verdict, r: dict) -> str:
    """A ladder row's result: pass, the same failure as the original, the crossref check's own (a wrong fake
    kernel, chased in its place), or a different failure."""
    if r["kind"] == "pass":
        return "pass"
    if r["same"]:
        return "FAIL (same)"
    if v.isolation.meta_kernel and r["stage"] == v.isolation.failing_stage:
        return "FAIL (fake kernel)"
    return f"fail ({r['kind']}, different)"


def _budget(budget) -> str | None:
    """ "20 min, spent: not asked: minify" for a run given --budget."""
    if not budget:
        return None
    head = f"{said(budget['seconds'])}, {'spent' if budget['spent'] else 'not spent'}"
    missed = [
        f"not asked: {', '.join(budget['not_asked'])}" if budget["not_asked"] else "",
        f"{budget['trials_not_run']} search trials not run" if budget["trials_not_run"] else "",
    ]
    return "; ".join([head] + [m for m in missed if m])


# The evidence a time plan may leave (minify/plan.COSTLY_EVIDENCE), in a summary row's words.
_LEFT_WORDS = {"config_set": "the config flips' smallest set"}


def _time_plan(plan) -> str | None:
    """ "5 min: not asked: the config flips' smallest set (--budget 20m asks it)" for a default run whose evidence
    began too late for its costly search."""
    if not plan:
        return None
    left = ", ".join(_LEFT_WORDS.get(name, name) for name in plan["not_asked"])
    return f"{said(plan['seconds'])}: not asked: {left} (--budget 20m asks it)"


def _mib(value) -> str:
    return "?" if value is None else f"{value:.0f} MiB"


def _pieces(pieces) -> str | None:
    """ "piece 2 of 2 failed: 3 nodes (relu, add)" for a user backend that had inductor compile pieces."""
    if not pieces:
        return None
    failed = pieces.get("failed")
    if not failed:
        return f"{pieces['count']} compiled, none failed"
    ops = ", ".join(op.split(".")[1] if op.startswith("aten.") else op for op in failed["ops"][:6])
    return f"piece {failed['piece']} of {pieces['count']} failed: {failed['nodes']} nodes ({ops})"
