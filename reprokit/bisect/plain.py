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

from reprokit.bisect.session import Session, bare_spec
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome, StageResult
from reprokit.data.stages import STAGE_TITLES
from reprokit.errors import NothingToIsolate
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
# Runs as written that must all fail the same way before the instrumentation is blamed: one failing run may be the
# script's own chance (every instrumented run passed). Two of two, one after the other, not a majority of three: a
# first run that passes or hangs ends it (a passing script costs one run, as before), and a failure that shows only
# now and then has --repeat to measure it; the same bar as the cache runs' RERUNS (bisect/start.py).
AS_WRITTEN = 2
# A backend torch cannot know: a run with it fails on it when torch's switch reaches the script's compile calls
# (torch._dynamo.optimize or a custom backend object may never ask torch's bisector for the backend).
PROBE_BACKEND = "reprokit_no_such_backend"
PLAIN_MARK = "reprokit-plain-run"  # in the journal key only (no variable of that name is ever set)
SWITCH_IGNORED = "torch's backend switch does not reach this script's compile calls"


def stage_env(stage: str) -> dict:
    """What a plain run of `stage` sets: torch's own switch, nothing of reprokit's."""
    return {"TORCHDYNAMO_DISABLE": "1"} if stage == "none" else {"TORCH_BISECT_BACKEND": stage}


def launcher(s: Session) -> tuple:
    """What starts the script: python itself, or torchrun's module for a job of several ranks."""
    ranks = s.opts.ranks
    return ("-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}") if ranks > 1 else ()


def command_line(s: Session) -> str:
    """The user's command, exactly as the plain run ran it."""
    start = ["torchrun", *launcher(s)[2:]] if s.opts.ranks > 1 else ["python"]
    return shlex.join([*start, os.path.relpath(s.opts.script, s.opts.cwd or None), *s.opts.argv])


def runs_here(s: Session) -> bool:
    """Whether the script can run as written here: not where the trials run on a cluster's nodes (its GPUs are
    there, not on the machine that submits them)."""
    return s.runner.remote is None


# A run as written that has no answer: the budget was spent before it, or its job was ended (slurm's skip).
NOT_RUN = (OutcomeKind.SKIP, OutcomeKind.BUDGET_SPENT)


def plain_run(s: Session, label: str, extra_env: dict | None = None, stage: str = "user") -> Outcome:
    """One run of the script exactly as the user runs it (plus `extra_env`), in the run folder's plain/LABEL: a
    trial of the Runner's (its slots, its GPUs, the --budget, journaled as kind "plain" so --resume reuses it)."""
    o = s.opts
    spec = bare_spec(s, stage, f"plain-{label}", env={**(extra_env or {}), PLAIN_MARK: label})
    folder = s.runner.run_dir.file(os.path.join("plain", label))

    def how(device: str | None, seconds: float) -> Outcome:
        env = {**(extra_env or {}), **({"CUDA_VISIBLE_DEVICES": device} if device else {})}
        return run_plain(o.script, tuple(o.argv), o.cwd, folder, seconds, env, sys.executable, launcher(s))

    return s.runner(spec, None if s.baseline is not None else PLAIN_LIMIT, how=how)


def as_written_labels() -> list[str]:
    """The folders of the runs as written: plain/as-written, plain/as-written-2."""
    return ["as-written"] + [f"as-written-{i}" for i in range(2, AS_WRITTEN + 1)]


def hidden_failure(s: Session, original: Outcome) -> Outcome | None:
    """The script run as written (up to AS_WRITTEN times); their failure when every one fails the same way
    (the instrumented original passed), or None (it passes, hangs, fails now and then, or cannot run here)."""
    if not runs_here(s):
        return None
    s.as_written = []
    for label in as_written_labels():  # one after another: a run that passes or hangs ends it (one run, one limit)
        run = plain_run(s, label)
        if run.kind in NOT_RUN:
            break
        s.as_written.append(run)
        if not run.failed or run.kind == OutcomeKind.HANG:
            break
    failure = same_failure(s.as_written)
    s.emit(Event.NOTE, text=f"the script run as written ({command_line(s)}): {as_written_words(s.as_written)}")
    if failure is None:
        return None
    s.emit(Event.NOTE, text=hidden_line(s))
    return dataclasses.replace(failure, user_backend=original.user_backend, compile_args=original.compile_args)


def same_failure(runs: list) -> Outcome | None:
    """The first run when all AS_WRITTEN runs fail the same way; a hang (killed at the limit) is not that failure."""
    if len(runs) < AS_WRITTEN or any(not x.failed or x.kind == OutcomeKind.HANG for x in runs):
        return None
    return runs[0] if all(runs[0].signature.matches(x.signature) for x in runs[1:]) else None


def as_written_words(runs: list) -> str:
    """How the runs as written ended, in a few words."""
    if not runs:
        return "not run (the budget was spent)"
    ends = "; ".join(dict.fromkeys(x.signature.short()[:200] for x in runs))
    failed = sum(1 for x in runs if x.failed and x.kind != OutcomeKind.HANG)
    said = f"{ends} ({failed} of {len(runs)} failing)" if len(runs) > 1 else ends
    if any(x.kind == OutcomeKind.HANG for x in runs):
        said += "; a run killed at the time limit is not counted as a failure"
    return said


def hidden_line(s: Session) -> str:
    """What the verdict says first: the instrumentation hid the failure, and how the bisect goes on."""
    return (
        f"reprokit's instrumentation hides the failure: the script fails run as written ({command_line(s)}, "
        f"{AS_WRITTEN} of {AS_WRITTEN} runs) and passes under reprokit's router; bisected by {HOW}"
    )


def plain_ladder(s: Session, original: Outcome) -> tuple[list[StageResult], Outcome | None]:
    """Each stage as a plain run, side by side, and the probe of torch's backend switch; whether each stage fails
    the way the runs as written did."""
    asks = [(stage, stage_env(stage), stage) for stage in PLAIN_STAGES]
    asks.append(("backend-switch-probe", {"TORCH_BISECT_BACKEND": PROBE_BACKEND}, "user"))
    outcomes = ordered_map(lambda a: plain_run(s, *a), asks, s.runner.jobs, abort=s.runner.cancel)
    results = []
    for stage, outcome in zip(PLAIN_STAGES, outcomes, strict=False):
        ran = outcome is not None and outcome.kind not in NOT_RUN
        same = ran and outcome.failed and original.signature.matches(outcome.signature)
        s.emit(Event.STAGE, stage=stage, outcome=outcome, same=same)
        results.append(
            StageResult(stage, outcome.kind, outcome.signature.short()[:200], outcome.seconds, same)
            if ran
            else StageResult(stage, "not run", "", 0.0, False)
        )
    probe = outcomes[-1] if outcomes[-1] is not None and outcomes[-1].kind not in NOT_RUN else None
    return results, probe


def switch_honoured(probe: Outcome | None) -> bool | None:
    """Whether torch's backend switch reached the script's compile calls: the probe failed on the unknown backend
    (None: the probe did not run)."""
    if probe is None:
        return None
    return probe.failed and PROBE_BACKEND in f"{probe.traceback or ''} {probe.signature.message or ''}"


def doubt_of(ladder: list[StageResult], user_backend: str | None, honoured: bool | None) -> str | None:
    """Why the ladder's stages cannot be trusted, or None."""
    if honoured is False:
        return (
            f"{SWITCH_IGNORED} (a run with TORCH_BISECT_BACKEND={PROBE_BACKEND} did not fail on it): "
            "no stage is claimed"
        )
    inductor = next((r for r in ladder if r.stage == "inductor"), None)
    if user_backend in (None, "inductor") and inductor is not None and inductor.kind != "not run" and not inductor.same:
        return (
            "the plain runs contradict each other: the script fails run as written with inductor, its backend, "
            f"but not with torch's inductor swapped in ({inductor.summary or inductor.kind}): no stage is claimed"
        )
    return None


def plain_finding(s: Session, original: Outcome, ladder: list[StageResult], probe: Outcome | None = None) -> dict:
    """verdict.json's plain_run: the command, the ladder's answer, how it was asked and what it could not ask.
    Raises NothingToIsolate when the script fails the same way with Dynamo off."""
    if any(r.stage == "none" and r.same for r in ladder):
        raise NothingToIsolate(
            "the script fails without compile too in the same way (run as written with TORCHDYNAMO_DISABLE=1): "
            "that is not a compiler bug"
        )
    honoured = switch_honoured(probe)
    doubt = doubt_of(ladder, original.user_backend, honoured)
    failing = None if doubt else next((r.stage for r in ladder if r.same), None)
    before = PLAIN_STAGES[PLAIN_STAGES.index(failing) - 1] if failing else None
    return {
        "command": command_line(s),
        "signature": original.signature.to_dict(),
        "folder": original.trial_dir,
        "runs_as_written": AS_WRITTEN,
        "backend_switch": {True: "honoured", False: "ignored", None: "not asked"}[honoured],
        "doubt": doubt,
        "failing_stage": failing,
        "last_passing_stage": before
        if before and any(r.stage == before and r.kind == OutcomeKind.PASS for r in ladder)
        else None,
        "how": HOW,
        "not_asked": NOT_ASKED,
        # ISSUE.md's words (report/ reads the verdict, not this module)
        "paragraph": f"Reprokit's instrumentation hides this failure: it shows when the script runs as written "
        f"(`{command_line(s)}`) and not under reprokit's router, so "
        + (f"the stages were asked by {HOW}; {doubt}" if doubt else f"the stages below come from {HOW}")
        + f". Not asked: {NOT_ASKED}.",
    }


def plain_summary(finding: dict) -> str:
    """The plain ladder's answer in one sentence."""
    if finding.get("doubt"):
        return finding["doubt"]
    failing = finding.get("failing_stage")
    if failing is None:
        return "no stage torch swaps in fails the same way; only the script's own backend does"
    return f"it fails from {STAGE_TITLES[failing]} on" + (
        f" and passes with {STAGE_TITLES[finding['last_passing_stage']]}" if finding.get("last_passing_stage") else ""
    )


def plain_verdict(s: Session, found: Isolation, original: Outcome) -> tuple[Isolation, dict]:
    """The isolation of a failure only the script run as written shows, from the plain ladder; the decisive runs."""
    ladder, probe = plain_ladder(s, original)
    finding = plain_finding(s, original, ladder, probe)
    said = f"{hidden_line(s)}: {plain_summary(finding)}; not asked: {NOT_ASKED}"
    found = dataclasses.replace(
        found,
        plain_run=finding,
        ladder=tuple(dataclasses.asdict(r) for r in ladder),
        failing_stage=finding["failing_stage"] or original.user_backend or "user",
        last_passing_stage=finding["last_passing_stage"],
        # the instrumented originals passed: the runs as written are the ones that count
        repro_rate=1.0,
        repro_runs=AS_WRITTEN,
        message="; ".join(x for x in (said, found.message) if x),
    )
    folders = {r.stage: os.path.join(os.path.dirname(original.trial_dir), r.stage) for r in ladder}
    decisive = {"first_failing": original.trial_dir}
    if finding["last_passing_stage"]:
        decisive["last_passing"] = folders[finding["last_passing_stage"]]
    return found, decisive
