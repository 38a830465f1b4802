"""The export ladder: the script with each step of its deployment path made real in turn, compared with eager.

Trial stages (child.export_router): "none" (every artefact the eager module), "export" (torch.export real, the
program's module run), "decompose" (run_decompositions real too), and the original (AOTInductor real too). The
first that fails the way the original does names the failing stage: export, decompose, aoti_compile or
aoti_run (where the original's failure was raised). An AOTInductor failure is then narrowed like inductor's.
"""

from __future__ import annotations

import os

from reprokit.bisect.configs import config_flips
from reprokit.bisect.ladder import record_stage
from reprokit.bisect.session import Naming, Session
from reprokit.bisect.subsystems import subsystem
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, Verdict
from reprokit.data.trial_files import read_tail, trial_record
from reprokit.export import aoti_debug
from reprokit.export.findings import cpp_compile_error, describe, draft_failures, export_finding
from reprokit.search import find_boundary

EXPORT_TRIAL_STAGES = ("export", "decompose")
FAILING_STAGES = ("export", "decompose", "aoti_compile", "aoti_run")


def export_record(outcome: Outcome | None) -> dict | None:
    """What the trial's export router recorded (entry points called, the phase that raised); None: no export."""
    return trial_record(outcome.trial_dir).get("export") if outcome is not None else None


# A session's "inductor" stage as the script with AOTInductor real: inductor's config and subsystem narrowing then
# asks its questions of AOTInductor.
AOTI_NAMING = Naming(stages=(("inductor", "user"),), label_prefix="aoti-")


def isolate_deployment(s: Session, v: Verdict, original: Outcome) -> dict | None:
    """The export ladder's decisive trials when the original failed inside torch.export or AOTInductor, else None
    (the Bisector's `deployment`)."""
    return run_export_ladder(s, v, original) if export_record(original) else None


def run_export_ladder(s: Session, v: Verdict, original: Outcome) -> dict:
    """Fill the verdict from the export ladder; the decisive trials."""
    s.emit(Event.LADDER_START, stages=[*EXPORT_TRIAL_STAGES, "aoti"])
    # save_graph=0: where export() raises, the export trial runs draft_export too and keeps its report
    outcomes = s.runner.map(
        [
            s.spec(stage, f"stage-{stage}", **({"save_graph": 0} if stage == "export" else {}))
            for stage in EXPORT_TRIAL_STAGES
        ]
    )
    s.stage_outcomes = {"none": s.runner(s.spec("none", "baseline-no-compile"))}
    ladder = []
    for stage, outcome in [*zip(EXPORT_TRIAL_STAGES, outcomes), ("aoti", original)]:
        ladder.append(record_stage(s, stage, outcome))
    v.ladder = [r.to_dict() for r in ladder]
    v.compile_args = {"entries": (export_record(original) or {}).get("entries", [])}
    failing = next((r for r in ladder if r.same), None)
    if failing is None:
        v.message = "the original fails, but no step of the export ladder fails that way alone"
        return {"first_failing": original.trial_dir}
    names = ["none", *EXPORT_TRIAL_STAGES, "aoti"]
    last = next(
        st for st in reversed(names[: names.index(failing.stage)]) if s.stage_outcomes[st].kind == OutcomeKind.PASS
    )
    outcome = s.stage_outcomes[failing.stage]
    v.failing_stage = stage_name(failing.stage, export_record(outcome))
    v.last_passing_stage = last
    v.graph_count = (export_record(outcome) or {}).get("nodes") or 0
    before = [s.stage_outcomes[r.stage].signature.said() for r in ladder[: ladder.index(failing)]]
    guard = next((said for said in before if "Guard failed" in said), None)
    if guard:  # the program would have refused the call the compiled package answered
        v.message = (
            f"the exported program rejects a call the script makes ({guard}); AOTInductor's package, "
            "which checks no input shapes by default, runs it anyway. Fix: dynamic_shapes with Dim ranges "
            "for the sizes that vary"
        )
    if v.failing_stage == "export":
        narrow_export(s, v, outcome)
    elif failing.stage == "aoti":
        narrow_aoti(s, v, outcome)
    return {"first_failing": outcome.trial_dir, "last_passing": s.stage_outcomes[last].trial_dir}


def stage_name(trial_stage: str, record: dict | None) -> str:
    """The verdict's failing_stage: AOTInductor's failure named by where it was raised (compile or run)."""
    if trial_stage != "aoti":
        return trial_stage
    return "aoti_compile" if (record or {}).get("phase") == "aoti_compile" else "aoti_run"


def narrow_export(s: Session, v: Verdict, failing: Outcome) -> None:
    """export() raised: the guard or constraint, the user's line and the fix; or ep.module() differs."""
    record = export_record(failing) or {}
    if record.get("phase") == "export_run":
        v.message = (
            f"the exported program fails on a call the script makes ({failing.signature.said()[:300]}), "
            "though export passed: a guard of the program rejects an input other than the example, or "
            "the program differs. Fix: dynamic_shapes with Dim ranges for the sizes that vary"
        )
        return
    if record.get("last_phase") != "export" or record.get("phase") != "export":
        v.message = "the exported program's module() differs from eager when the script calls it"
        return
    finding = export_finding(failing.traceback, s.opts.script, draft_failures(failing.trial_dir))
    if finding and os.path.exists(os.path.join(failing.trial_dir, "draft_export.txt")):
        finding["report"] = "draft_export.txt"  # packed beside ISSUE.md
    if finding:
        v.export = finding
        v.message = describe(finding)


def narrow_aoti(s: Session, v: Verdict, failing: Outcome) -> None:
    """AOTInductor's failure: the config flips, then the lowering whose application breaks it, then inductor's
    counted passes, all asked of AOTI."""
    aoti = s.named(AOTI_NAMING)
    error = cpp_compile_error(read_tail(os.path.join(failing.trial_dir, "stderr.txt")) or "")
    if error:  # g++'s output is hundreds of kilobytes of warnings around this one line
        v.message = error
    elif v.failing_stage == "aoti_run":
        aoti_run_switches(s, v, failing)
    elif v.cuda_fault:  # seen on an H100 (tests/gpu_cases/aoti_relu_assert.py)
        v.message = (
            "AOTInductor runs each CUDA kernel it generates once while compiling (its autotuning, on random "
            "inputs of the example's shapes), and one of them"
            + (f", {v.cuda_fault['kernel']}," if v.cuda_fault.get("kernel") else "")
            + f' raised "{v.cuda_fault["fault"]}" there'
            + (", the same with CUDA_LAUNCH_BLOCKING=1" if v.cuda_fault.get("same") else "")
        )
    if s.opts.configs:
        v.config = config_flips(aoti, "inductor", failing)
    if s.opts.subsystems:
        v.subsystem = lowering_boundary(aoti, failing) or subsystem(aoti, "inductor", failing)


def aoti_run_switches(s: Session, v: Verdict, failing: Outcome) -> None:
    """The package failed at run time: re-run it with AOTI's input checks, then (no kernel named) its
    kernel-name printer; what they say goes into the verdict's message."""
    checked = aoti_debug.check_inputs(s, "user")
    if checked:  # a guard the program would have checked already said which call (and the fix): keep it first
        v.message = (
            f"{v.message}; AOTI_RUNTIME_CHECK_INPUTS=1 refuses that call ({checked['error']})"
            if v.message
            else aoti_debug.describe_inputs(checked)
        )
    if aoti_debug.names_no_kernel(failing):  # "Unknown exception", or a CUDA fault the loader hid: which kernel
        # compute-sanitizer ran already where the launch-blocking re-run named no kernel (bisect/cuda.py)
        sanitize = bool(v.cuda_fault and not v.cuda_fault.get("sanitizer"))
        v.aoti_kernel = aoti_debug.name_aoti_kernel(s, "user", failing, sanitize=sanitize)
        if v.aoti_kernel:
            v.message = "; ".join(filter(None, (v.message, aoti_debug.describe(v.aoti_kernel))))
            if v.cuda_fault:  # the launch-blocking re-run's logs name every kernel of the package: this one failed
                v.cuda_fault["kernel"] = v.aoti_kernel["kernel"]


def lowering_boundary(s: Session, failing: Outcome) -> dict | None:
    """The first lowering application that, lowered, fails the same way while the ones before it do not.

    Searched directly, not after "every lowering off": AOTInductor with every op a fallback kernel often fails
    otherwise (its proxy executor), which would hide the lowering that breaks it.
    """
    total = (failing.counters or {}).get("inductor/lowerings")
    if not total:
        return None

    def spec_at(max_, attempt=0):
        return s.spec(
            "inductor",
            f"lowerings-max{max_}",
            attempt=attempt,
            subsystem={"backend": "inductor", "name": "lowerings", "max": max_},
        )

    boundary = find_boundary(
        lambda m: s.fails_same(s.runner(spec_at(m))),
        lo=-1,
        hi=total - 1,
        width=s.runner.jobs,
        fails_many=lambda points: [s.fails_same(x) for x in s.runner.map([spec_at(p) for p in points])],
    )
    if boundary is None:
        return None
    at, below = s.runner.map([spec_at(boundary), spec_at(boundary - 1)])
    if below is None or below.kind != OutcomeKind.PASS or not s.fails_same(at):
        return None  # the application before it fails too (differently): no single lowering to name
    result = {
        "name": "lowerings",
        "application": boundary,
        "applications": total,
        "detail": at.bisect_detail,
        "confirmed": True,
    }
    s.emit(Event.SUBSYSTEM, **result)
    return result
