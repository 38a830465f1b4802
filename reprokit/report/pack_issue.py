"""ISSUE.md of a bisect pack: the text for PyTorch's torch.compile bug-report form, scrubbed and portable."""

from __future__ import annotations

from reprokit import __version__
from reprokit.data.stages import STAGE_TITLES
from reprokit.report import triage
from reprokit.report.github import fit_github
from reprokit.report.issue_notes import issue_notes
from reprokit.report.numerics_notes import numerics_lines
from reprokit.report.pack_facts import PackFacts
from reprokit.report.portable import portable_command, portable_text
from reprokit.report.render import environment


def issue_text(
    facts: PackFacts, repro: str | None, summary: str, tarball_name: str, tlparse_at: str | None, data_attached: bool
) -> str:
    """ISSUE.md: each fact once, the minimal graph (the repro's, as packed) and not the original, and no file a
    GitHub reader cannot open but the tarball. summary: the verdict's brief summary (report/summary.py)."""
    v = facts.verdict
    inline = repro.rstrip("\n") if repro and len(repro.splitlines()) < 100 else None
    graph = minimal_graph(repro) if repro and not inline else None
    cuda = bool(facts.first.get("cuda"))
    ladder = [
        {
            "title": STAGE_TITLES.get(r["stage"], r["stage"]),
            "result": "pass" if r["kind"] == "pass" else ("FAIL" if r["same"] else f"fail ({r['kind']}, different)"),
            "seconds": r["seconds"],
        }
        for r in v.isolation.ladder
    ]
    title, labels = triage.title(v, cuda), triage.labels(v, cuda)
    notes = issue_notes(v, numerics_lines(v), repro, inline, tlparse_at, data_attached)
    command = portable_command(facts.info.get("command") or "reprokit bisect", facts.places)
    text = (
        environment()
        .get_template("ISSUE.md.j2")
        .render(
            title=title,
            labels=labels,
            summary=summary,
            ladder=ladder,
            repro_inline=inline,
            minimal_graph=graph,
            error_log=facts.error["text"],
            error_source=facts.error["source"],
            versions=facts.env.get("text") or facts.env.get("error", "unavailable"),
            reprokit_version=__version__,
            command=command,
            tarball_name=tarball_name,
            releases=v.run.versions,
            **notes,
        )
    )
    # Paths first: the redactor writes the home folder as ~, which would hide the interpreter's own paths.
    text = facts.redactor.scrub(portable_text(text, facts.places), "ISSUE.md")
    return fit_github(
        text,
        [
            (graph, "(the minimal graph is in the attached tarball)"),
            (inline, "(the minimal repro is in the attached tarball)"),
        ],
    )


def minimal_graph(repro: str) -> str | None:
    """The graph classes of repro.py (its `class ...(torch.nn.Module)` blocks), or None when they are too long to
    show (over 80 lines)."""
    lines, keep, inside = repro.split("\n"), [], False
    for line in lines:
        if line.startswith("class "):
            inside = True
        elif line and not line[0].isspace():
            inside = False
        if inside:
            keep.append(line)
    code = "\n".join(keep).strip("\n")
    return code if code and len(code.splitlines()) <= 80 else None
