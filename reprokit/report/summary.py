"""The verdict of a bisect in a few sentences: what fails, where, and what the bisect pinned it to (README.md's
summary, and ISSUE.md's first paragraph in brief)."""

from __future__ import annotations

import os

from reprokit.data.rate import rate_line
from reprokit.data.signature import Signature
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.verdict import Verdict
from reprokit.data.warm_cache import describe as describe_warm


def passing_after(v: Verdict) -> list:
    """Stages above the failing one that pass all the same (jvp of ldexp #197086: aot_eager crashes, inductor's
    own decompositions take another path and pass)."""
    iso = v.isolation
    stages = [e["stage"] for e in iso.ladder or []]
    if iso.failing_stage not in stages:
        return []
    return [e["stage"] for e in (iso.ladder or [])[stages.index(iso.failing_stage) + 1 :] if e.get("kind") == "pass"]


def summary(v: Verdict, brief: bool = False) -> str:
    """The verdict in a few sentences, for README.md; brief (ISSUE.md, whose list of what was isolated says the
    graph, the config and the subsystem): what fails and in which stage only."""
    iso = v.isolation
    sig = Signature.from_dict(iso.signature) if iso.signature else None
    what = {
        "exception": "raises",
        "crash": "crashes the process",
        "accuracy": "silently computes wrong values",
        "hang": "hangs",
        "exit": "makes the script's own check fail",
    }.get(iso.kind or "", "fails")
    tool = "torch.export.export" if iso.export else "torch.compile"  # export() itself raised (#20)
    parts = [f"`{tool}` {what} ({sig.said() if sig else 'unknown'}) in `{os.path.basename(iso.script)}`."]
    if sig and sig.inside():  # the wrapper's message is the same for every error it holds: the one it holds
        inside = sig.inside()
        parts.append(f"The error inside that wrapper: {code_span(inside)}{'' if inside.endswith('.') else '.'}")
    if iso.plain_run:  # reprokit's instrumentation hid it: how it was bisected instead (bisect/plain.py)
        parts.append(iso.plain_run["paragraph"])
    parts.extend(stage_sentences(v))
    if iso.graph is not None and not brief:
        parts.append(f"Graph {iso.graph} of {iso.graph_count} that Dynamo produced fails on its own.")
    if iso.capture:
        parts.append(
            f"Found from one captured run of the job (`reprokit capture`, rank {iso.capture.get('rank')}): "
            "every trial ran the captured graph, none the script."
        )
    if v.subsystem and not brief:
        parts.append(
            f"Torch's bisector counters pin it to {v.subsystem['name']} application "
            f"#{v.subsystem['application']}: `{v.subsystem.get('detail')}`."
        )
    if v.config and not brief:
        parts.append("It passes with " + ", ".join(f"`{k}={val!r}`" for k, val in v.config.items()) + ".")
    if iso.flaky and iso.repro_rate is not None:
        parts.append(
            f"The failure is flaky: the script {rate_line(round(iso.repro_rate * iso.repro_runs), iso.repro_runs)}."
            if iso.repro_runs
            else f"The failure is flaky: it reproduced in {iso.repro_rate:.0%} of runs."
        )
        if iso.flaky_tries:
            parts.append(
                f"Each question (stage, counter, cut, the repro's own check) was asked until it failed that "
                f"way, up to {iso.flaky_tries} runs; one that passed all {iso.flaky_tries} counted as passing, "
                "so repro.py may need a few runs to fail."
            )
    if iso.unsteady:
        parts.append(f"Note: {iso.unsteady}.")
    return " ".join(parts)


def code_span(text: str) -> str:
    """Text as Markdown inline code, a backtick inside it kept (a double-backtick span)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def stage_sentences(v: Verdict) -> list:
    """The summary's sentence on the stage: the warm-cache run's, or which stage passes and which fails."""
    iso = v.isolation
    out: list = []
    if iso.warm_cache:
        said = describe_warm(iso.warm_cache)
        out.append(said[0].upper() + said[1:] + ".")
    elif iso.failing_stage and not (iso.plain_run or {}).get("doubt"):  # a doubt: its paragraph
        if iso.last_passing_stage and iso.failing_stage in STAGE_TITLES:
            later = passing_after(v)
            out.append(
                f"It passes with `{STAGE_TITLES[iso.last_passing_stage]}` and fails from "
                f"`{STAGE_TITLES.get(iso.failing_stage, iso.failing_stage)}` on, so the bug is in that stage."
                if not later
                else f"It passes with `{STAGE_TITLES[iso.last_passing_stage]}` and fails with "
                f"`{STAGE_TITLES.get(iso.failing_stage, iso.failing_stage)}`, so the bug is in that stage; "
                + " and ".join(f"`{STAGE_TITLES.get(s, s)}`" for s in later)
                + " passes again."
            )
        else:
            out.append(f"Every stock stage passes; the script's own backend `{iso.failing_stage}` fails.")
    return out


def summaries(v: Verdict) -> tuple[str, str]:
    """(ISSUE.md's brief summary, README.md's whole one), said once for the pack."""
    return summary(v, brief=True), summary(v)
