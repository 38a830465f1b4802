"""When the instrumented original passes: the script run as its user runs it, and when that fails, a ladder that
keeps torch.compile's own objects (issue 45, item 6).

Reprokit's router is a new backend object per torch.compile call: Dynamo's cache entries and guards see another
backend than the user's, so a failure that lives in what Dynamo reuses (two closures of one factory sharing a code
object) passes every trial. The fallback asks torch itself to swap the backend (TORCH_BISECT_BACKEND, read by
torch.compile), in plain runs of the script: one backend object per stage, shared by every torch.compile call, as
torch builds it for the user.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys

from reprokit.bisect.session import Session
from reprokit.data.records import Outcome, StageResult, Verdict
from reprokit.data.stages import STAGE_TITLES
from reprokit.trial.ordered_map import ordered_map
from reprokit.trial.plain import run_plain

# The stages torch.compile itself swaps in for its backend when TORCH_BISECT_BACKEND names one
# (torch/_inductor/compiler_bisector.py); "none" turns Dynamo off (TORCHDYNAMO_DISABLE).
PLAIN_STAGES = ("none", "eager", "aot_eager", "aot_eager_decomp_partition", "inductor")
HOW = "plain runs of the script with torch.compile's backend swapped by torch itself (TORCH_BISECT_BACKEND)"
NOT_ASKED = (
    "which graph fails, graph capture and a minified repro.py, inductor config flips, "
    "torch's pass and lowering counters (each needs reprokit's router, which hides the failure)"
)
PLAIN_LIMIT = 600.0  # seconds a plain run may take before the baseline sets the run's limit


def stage_env(stage: str) -> dict:
    """What a plain run of `stage` sets: torch's own switch, nothing of reprokit's."""
    return {"TORCHDYNAMO_DISABLE": "1"} if stage == "none" else {"TORCH_BISECT_BACKEND": stage}


def launcher(s: Session) -> tuple:
    """What starts the script: python itself, or torchrun's module for a job of several ranks."""
    ranks = s.opts.ranks
    return ("-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}") if ranks > 1 else ()


def command_line(s: Session) -> str:
    """The user's command, as the plain run ran it."""
    start = ["torchrun", *launcher(s)[3:]] if s.opts.ranks > 1 else ["python"]
    return shlex.join([*start, os.path.relpath(s.opts.script, s.opts.cwd or None), *s.opts.argv])


def runs_here(s: Session) -> bool:
    """Whether the script can run as written here: not where the trials run on a cluster's nodes (its GPUs are
    there, not on the machine that submits them)."""
    return s.runner.remote is None


def plain_run(s: Session, label: str = "as-written", extra_env: dict | None = None) -> Outcome:
    """One run of the script exactly as the user runs it (plus `extra_env`), in the run folder's plain/LABEL."""
    o = s.opts
    folder = s.runner.run_dir.file(os.path.join("plain", label))
    limit = s.runner.timeout if s.baseline is not None else PLAIN_LIMIT
    return run_plain(o.script, tuple(o.argv), o.cwd, folder, limit, extra_env, sys.executable, launcher(s))


def hidden_failure(s: Session, original: Outcome) -> Outcome | None:
    """The script run once as written; its failure (the instrumented original passed), or None when it passes too
    or cannot run here."""
    if not runs_here(s):
        return None
    plain = plain_run(s)
    s.emit("note", text=f"the script run as written ({command_line(s)}): {plain.signature.short()}")
    if plain.kind == "pass":
        return None
    s.emit("note", text=hidden_line(s))
    return dataclasses.replace(plain, user_backend=original.user_backend, compile_args=original.compile_args)


def hidden_line(s: Session) -> str:
    """What the verdict says first: the instrumentation hid the failure, and how the bisect goes on."""
    return (
        f"reprokit's instrumentation hides the failure: the script fails run as written ({command_line(s)}) and "
        f"passes under reprokit's router; bisected by {HOW}"
    )


def plain_ladder(s: Session, original: Outcome) -> list[StageResult]:
    """Each stage as a plain run, side by side; whether each fails the way the plain original did."""
    outcomes = ordered_map(
        lambda stage: plain_run(s, stage, stage_env(stage)), PLAIN_STAGES, s.runner.jobs, abort=s.runner.cancel
    )
    results = []
    for stage, outcome in zip(PLAIN_STAGES, outcomes, strict=True):
        same = outcome is not None and outcome.failed and original.signature.matches(outcome.signature)
        s.emit("stage", stage=stage, outcome=outcome, same=same)
        results.append(
            StageResult(stage, outcome.kind, outcome.signature.short()[:200], outcome.seconds, same)
            if outcome is not None
            else StageResult(stage, "not run", "", 0.0, False)
        )
    return results


def plain_finding(s: Session, original: Outcome, ladder: list[StageResult]) -> dict:
    """verdict.json's plain_run: the command, the ladder's answer, how it was asked and what it could not ask."""
    failing = next((r.stage for r in ladder if r.same), None)
    before = PLAIN_STAGES[PLAIN_STAGES.index(failing) - 1] if failing and failing != "none" else None
    return {
        "command": command_line(s),
        "signature": original.signature.to_dict(),
        "folder": original.trial_dir,
        "failing_stage": failing,
        "last_passing_stage": before
        if before and any(r.stage == before and r.kind == "pass" for r in ladder)
        else None,
        "how": HOW,
        "not_asked": NOT_ASKED,
        # ISSUE.md's words (report/ reads the verdict, not this module)
        "paragraph": f"Reprokit's instrumentation hides this failure: it shows when the script runs as written "
        f"(`{command_line(s)}`) and not under reprokit's router, so the stages below come from {HOW}. "
        f"Not asked: {NOT_ASKED}.",
    }


def plain_summary(finding: dict) -> str:
    """The plain ladder's answer in one sentence."""
    failing = finding.get("failing_stage")
    if failing is None:
        return "no stage torch swaps in fails the same way; only the script's own backend does"
    if failing == "none":
        return "it fails with Dynamo off too, run as written"
    return f"it fails from {STAGE_TITLES[failing]} on" + (
        f" and passes with {STAGE_TITLES[finding['last_passing_stage']]}" if finding.get("last_passing_stage") else ""
    )


def plain_verdict(s: Session, v: Verdict, original: Outcome) -> dict:
    """The verdict of a failure only the script run as written shows, from the plain ladder; the decisive runs."""
    ladder = plain_ladder(s, original)
    finding = plain_finding(s, original, ladder)
    v.plain_run = finding
    v.ladder = [dataclasses.asdict(r) for r in ladder]
    v.failing_stage = finding["failing_stage"] or original.user_backend or "user"
    v.last_passing_stage = finding["last_passing_stage"]
    v.repro_rate, v.repro_runs = 1.0, 1  # the instrumented originals passed: the plain run is the one that counts
    said = f"{hidden_line(s)}: {plain_summary(finding)}; not asked: {NOT_ASKED}"
    v.message = "; ".join(x for x in (said, v.message) if x)
    folders = {r.stage: os.path.join(os.path.dirname(original.trial_dir), r.stage) for r in ladder}
    decisive = {"first_failing": original.trial_dir}
    if finding["last_passing_stage"]:
        decisive["last_passing"] = folders[finding["last_passing_stage"]]
    return decisive
