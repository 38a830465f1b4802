"""Numerics-only, or a wrong kernel? An accuracy failure asked of inductor's numerics modes, and the first node
of the failing graph whose compiled value differs from eager (child/divergence), beside the lowering the counters
named.

The modes: `numerics` (TORCHINDUCTOR_NUMERICS, torch 2.15 on: strict_pointwise, strict_reduction, strict) and the
fallback to ATen for every op (`fallback_by_default`, inductor lite mode's), asked beside them. A difference strict
numerics removes comes from reordering or precision, and the weakest mode that removes it is a workaround; one it
does not remove is a wrong lowering. A torch without `numerics` (2.13) is said to have none, and nothing is asked.
"""

from __future__ import annotations

import os

from reprokit.bisect.session import Session, passes
from reprokit.data.events import Event
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.rundir import read_json
from reprokit.data.stages import STRICT_NUMERICS
from reprokit.data.trial_files import trial_record

FALLBACK = "fallback_to_aten"


def is_accuracy(signature: dict | None, check_accuracy: bool) -> bool:
    """Whether the failure (its signature, as the isolation holds it) is wrong numbers: reprokit's own check, or the
    script's (an assert, an exit)."""
    sig = signature or {}
    return check_accuracy or sig.get("kind") in ("accuracy", "exit") or sig.get("exc_type") == "AssertionError"


def mode_configs(have: dict) -> dict:
    """mode -> the inductor config that asks it, for the modes this torch has (`have`: what a trial recorded)."""
    if "numerics" not in have:
        # The fallback alone cannot tell numerics from a wrong lowering (both are inductor's kernels), and the
        # lowering counter already tells kernels from graph passes: without strict modes, nothing is asked.
        return {}
    modes: dict = {m: {"numerics": m} for m in STRICT_NUMERICS}
    if "fallback_by_default" in have:
        modes[FALLBACK] = {"fallback_by_default": True}
    return modes


def ask_numerics(s: Session, stage: str, failing: Outcome) -> dict:
    """Each numerics mode this torch has, asked of the failing stage side by side; what that says."""
    state = trial_record((s.original if s.graph_case and s.original else failing).trial_dir)
    have = state.get("numerics") or {}
    modes = mode_configs(have)
    outs = s.runner.map([s.spec(stage, f"numerics-{m}", config=c) for m, c in modes.items()]) if modes else []
    found = numerics_finding(have.get("torch"), {m: passes(o) for m, o in zip(modes, outs)})
    s.emit(Event.NOTE, text=found["text"])
    return found


def numerics_finding(torch_version: str | None, passed: dict) -> dict:
    """{"passed", "cause", "workaround", "text"} from which modes removed the difference (passed: mode -> bool).
    cause: "numerics" (a strict mode removes it), "lowering" (strict does not), None (no strict mode asked)."""
    weakest = next((m for m in STRICT_NUMERICS if passed.get(m)), None)
    fallback = passed.get(FALLBACK)
    cause, workaround = None, None
    if not any(m in passed for m in STRICT_NUMERICS):
        text = f"numerics modes not asked: torch {torch_version or '(unknown)'} has no TORCHINDUCTOR_NUMERICS"
    elif weakest:
        cause, workaround = "numerics", f"TORCHINDUCTOR_NUMERICS={weakest}"
        text = f"numerics-only: {workaround} removes the difference: it comes from reordering or precision"
    else:
        cause = "lowering"
        text = "the lowering is wrong: strict numerics (TORCHINDUCTOR_NUMERICS=strict) does not remove the difference"
    if fallback is True:
        text += "; inductor's fallback to ATen (fallback_by_default=True) removes it"
        workaround = workaround or "torch._inductor.config.fallback_by_default = True"
    elif fallback is False:
        text += (
            "; it stays with inductor's fallback to ATen (fallback_by_default=True): it is made before inductor's "
            "kernels (a decomposition or a graph pass)"
        )
    return {"passed": passed, "cause": cause, "workaround": workaround, "text": text}


def first_divergence(s: Session, stage: str, case: str | None, subsystem: dict | None) -> dict | None:
    """The first node of the failing graph (the case folder) whose compiled value differs from eager, and whether
    it is the op of the lowering application the counters named; None without a graph."""
    if not case or not os.path.exists(os.path.join(case, "meta.json")):
        return None
    out = s.runner(TrialSpec(mode="divergence", stage=stage, case=case, label="first-diverging-node"))
    path = os.path.join(out.trial_dir, "divergence.json")
    if not os.path.exists(path):
        return {"node": None, "why": f"the trial gave {out.signature.short() if out.failed else 'no answer'}"}
    found = read_json(path)
    found["lowering"] = agreement(found, subsystem)
    s.emit(Event.NOTE, text=divergence_text(found))
    return found


# Dynamo's names for what a lowering sees as another op: a dtype cast is `to` in the graph, convert_element_type
# in the lowering.
_SAME_OP = {"convert_element_type": {"to", "type", "float", "half", "bfloat16", "double", "_to_copy"}}


def agreement(found: dict, subsystem: dict | None) -> str | None:
    """How the node found stands to the lowering application named: "agrees" (the same op), "feeds" (the op named
    computes one of the node's inputs, in the node's kernel: as an output of its own a fused op may be lowered
    otherwise, as relu after addmm is on CPU), "differs", or None when no lowering was named."""
    if not found.get("node") or not subsystem or subsystem.get("name") != "lowerings":
        return None
    lowered = base_name(str(subsystem.get("detail") or "").split(" ")[0])

    def same(target) -> bool:
        name = base_name(str(target or ""))
        return name == lowered or name in _SAME_OP.get(lowered, ())

    if same(found.get("target")):
        return "agrees"
    return "feeds" if any(same(t) for t in found.get("feeds") or ()) else "differs"


def base_name(target: str) -> str:
    """ "aten.relu.default" -> "relu"; "prims.convert_element_type.default" -> "convert_element_type"; "to" -> "to"."""
    parts = [p for p in target.split(".") if p]
    if len(parts) >= 2 and parts[0] in ("aten", "prims", "torch", "ops"):
        parts = parts[1:] if parts[0] != "torch" else parts[-1:]
        return parts[0] if len(parts) == 1 or parts[-1] in ("default", "Tensor", "Scalar") else parts[-2]
    return parts[-1] if parts else target


def divergence_text(found: dict) -> str:
    """The first diverging node in words, and whether the lowering counter's answer agrees."""
    if not found.get("node"):
        return f"first diverging node: none found ({found.get('why')})"
    where = "beyond 1e-3" if found.get("level") == "tolerance" else "beyond rounding"
    values = (
        f" (eager {found['eager']:.9g}, compiled {found['compiled']:.9g})"
        if isinstance(found.get("eager"), float) and isinstance(found.get("compiled"), float)
        else ""
    )
    text = (
        f"first diverging node: {found['node']} ({found['target']}), node {found['index']} of the "
        f"{found['of']} the output is computed from, differs from eager {where}{values}"
    )
    said = {
        "agrees": "; it agrees with the lowering counter's answer",
        "feeds": "; the lowering counter named the op that feeds it, computed in its kernel",
        "differs": "; the lowering counter named another op",
    }
    return text + said.get(found.get("lowering") or "", "")
