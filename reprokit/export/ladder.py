"""The export ladder: the script with each step of its deployment path made real in turn, compared with eager.

Trial stages (child.export_router): "none" (every artefact the eager module), "export" (torch.export real, the
program's module run), "decompose" (run_decompositions real too), and the original (AOTInductor real too). The
first that fails the way the original does names the failing stage: export, decompose, aoti_compile or
aoti_run (where the original's failure was raised). An AOTInductor failure is then narrowed like inductor's.
"""

from __future__ import annotations

import os
from dataclasses import replace

from reprokit.bisect.configs import config_flips
from reprokit.bisect.ladder import record_stage
from reprokit.bisect.session import Naming, Session
from reprokit.bisect.subsystems import subsystem
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome
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


def isolate_deployment(s: Session, found: Isolation, original: Outcome) -> tuple[Isolation, dict] | None:
    """(the isolation, the decisive trials) from the export ladder when the original failed inside torch.export or
    AOTInductor, else None (the Bisector's `deployment`)."""
    return run_export_ladder(s, found, original) if export_record(original) else None


def run_export_ladder(s: Session, found: Isolation, original: Outcome) -> tuple[Isolation, dict]:
    """The isolation the export ladder finds; the decisive trials."""
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
    found = replace(
        found,
        ladder=tuple(r.to_dict() for r in ladder),
        compile_args={"entries": (export_record(original) or {}).get("entries", [])},
    )
    failing = next((r for r in ladder if r.same), None)
    if failing is None:
        said = "the original fails, but no step of the export ladder fails that way alone"
        return replace(found, message=said), {"first_failing": original.trial_dir}
    names = ["none", *EXPORT_TRIAL_STAGES, "aoti"]
    last = next(
        st for st in reversed(names[: names.index(failing.stage)]) if s.stage_outcomes[st].kind == OutcomeKind.PASS
    )
    outcome = s.stage_outcomes[failing.stage]
    found = replace(
        found,
        failing_stage=stage_name(failing.stage, export_record(outcome)),
        last_passing_stage=last,
        graph_count=(export_record(outcome) or {}).get("nodes") or 0,
    )
    before = [s.stage_outcomes[r.stage].signature.said() for r in ladder[: ladder.index(failing)]]
    guard = next((said for said in before if "Guard failed" in said), None)
    if guard:  # the program would have refused the call the compiled package answered
        found = replace(
            found,
            message=f"the exported program rejects a call the script makes ({guard}); AOTInductor's package, "
            "which checks no input shapes by default, runs it anyway. Fix: dynamic_shapes with Dim ranges "
            "for the sizes that vary",
        )
    if found.failing_stage == "export":
        found = narrow_export(s, found, outcome)
    elif failing.stage == "aoti":
        found = narrow_aoti(s, found, outcome)
    return found, {"first_failing": outcome.trial_dir, "last_passing": s.stage_outcomes[last].trial_dir}


def stage_name(trial_stage: str, record: dict | None) -> str:
    """The isolation's failing_stage: AOTInductor's failure named by where it was raised (compile or run)."""
    if trial_stage != "aoti":
        return trial_stage
    return "aoti_compile" if (record or {}).get("phase") == "aoti_compile" else "aoti_run"


def narrow_export(s: Session, found: Isolation, failing: Outcome) -> Isolation:
    """export() raised: the guard or constraint, the user's line and the fix; or ep.module() differs."""
    record = export_record(failing) or {}
    if record.get("phase") == "export_run":
        return replace(
            found,
            message=f"the exported program fails on a call the script makes ({failing.signature.said()[:300]}), "
            "though export passed: a guard of the program rejects an input other than the example, or "
            "the program differs. Fix: dynamic_shapes with Dim ranges for the sizes that vary",
        )
    if record.get("last_phase") != "export" or record.get("phase") != "export":
        return replace(found, message="the exported program's module() differs from eager when the script calls it")
    finding = export_finding(failing.traceback, s.opts.script, draft_failures(failing.trial_dir))
    if not finding:
        return found
    if os.path.exists(os.path.join(failing.trial_dir, "draft_export.txt")):
        finding["report"] = "draft_export.txt"  # packed beside ISSUE.md
    return replace(found, export=finding, message=describe(finding))


def narrow_aoti(s: Session, found: Isolation, failing: Outcome) -> Isolation:
    """AOTInductor's failure: the config flips, then the lowering whose application breaks it, then inductor's
    counted passes, all asked of AOTI."""
    aoti = s.named(AOTI_NAMING)
    error = cpp_compile_error(read_tail(os.path.join(failing.trial_dir, "stderr.txt")) or "")
    fault = found.cuda_fault
    if error:  # g++'s output is hundreds of kilobytes of warnings around this one line
        found = replace(found, message=error)
    elif found.failing_stage == "aoti_run":
        found = aoti_run_switches(s, found, failing)
    elif fault:  # seen on an H100 (tests/gpu_cases/aoti_relu_assert.py)
        found = replace(
            found,
            message="AOTInductor runs each CUDA kernel it generates once while compiling (its autotuning, on "
            "random inputs of the example's shapes), and one of them"
            + (f", {fault['kernel']}," if fault.get("kernel") else "")
            + f' raised "{fault["fault"]}" there'
            + (", the same with CUDA_LAUNCH_BLOCKING=1" if fault.get("same") else ""),
        )
    if s.opts.configs:
        found = replace(found, config=config_flips(aoti, "inductor", failing))
    if s.opts.subsystems:
        found = replace(found, subsystem=lowering_boundary(aoti, failing) or subsystem(aoti, "inductor", failing))
    return found


def aoti_run_switches(s: Session, found: Isolation, failing: Outcome) -> Isolation:
    """The package failed at run time: re-run it with AOTI's input checks, then (no kernel named) its
    kernel-name printer; what they say goes into the isolation's message."""
    checked = aoti_debug.check_inputs(s, "user")
    message, fault = found.message, found.cuda_fault
    if checked:  # a guard the program would have checked already said which call (and the fix): keep it first
        message = (
            f"{message}; AOTI_RUNTIME_CHECK_INPUTS=1 refuses that call ({checked['error']})"
            if message
            else aoti_debug.describe_inputs(checked)
        )
    if not aoti_debug.names_no_kernel(failing):
        return replace(found, message=message)
    # "Unknown exception", or a CUDA fault the loader hid: which kernel. compute-sanitizer ran already where the
    # launch-blocking re-run named no kernel (bisect/cuda.py)
    kernel = aoti_debug.name_aoti_kernel(s, "user", failing, sanitize=bool(fault and not fault.get("sanitizer")))
    if kernel:
        message = "; ".join(filter(None, (message, aoti_debug.describe(kernel))))
        if fault:  # the launch-blocking re-run's logs name every kernel of the package: this one failed
            fault = {**fault, "kernel": kernel["kernel"]}
    return replace(found, message=message, aoti_kernel=kernel, cuda_fault=fault)


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
