"""The issue's title and labels in PyTorch's own words, from the verdict's ablation.

The title names the component (`[inductor][cpu]`, `[aot_autograd]`, `[dynamo]`), the op or pass the bisect pinned
and what goes wrong; the labels are those PyTorch's triage applies to such a failure.
"""

from __future__ import annotations

import re

from reprokit.data.kinds import OutcomeKind
from reprokit.data.signature import Signature
from reprokit.data.stages import CROSSREF
from reprokit.data.verdict import Verdict

COMPONENT = {
    "inductor": "inductor",
    "aot_eager": "aot_autograd",
    "aot_eager_decomp_partition": "aot_autograd",
    CROSSREF: "fake tensor",
    "eager": "dynamo",
}
STAGE_LABELS = {
    "inductor": ["module: inductor"],
    "aot_eager": ["module: aotdispatch"],
    "aot_eager_decomp_partition": ["module: aotdispatch"],
    CROSSREF: ["module: fakeTensor", "module: custom-operators"],
    "eager": ["module: dynamo"],
}
KIND_LABELS = {
    "accuracy": ["module: correctness (silent)"],
    "crash": ["module: crash"],
    "hang": ["module: deadlock"],
    "cuda_fault": ["module: crash"],
}
SUBSYSTEM_LABELS = {"decomposition": ["module: decompositions"], "cudagraphs": ["module: cuda graphs"]}
SUBSYSTEM_WORDS = {
    "lowerings": "lowering",
    "decomposition": "decomposition",
    "pre_grad_passes": "pre-grad pass",
    "joint_graph_passes": "joint-graph pass",
    "post_grad_passes": "post-grad pass",
    "cudagraphs": "cudagraphs",
}


def op_name(detail: str | None) -> str | None:
    """`aten.relu` from a counter's detail such as `aten.relu.default (%relu : ...)`; a pass's name as it is."""
    if not detail:
        return None
    first = detail.split(" (", 1)[0].strip().split()[0] if detail.strip() else ""
    first = re.sub(r"\.(default|Tensor|Scalar|int|out)$", "", first)
    return first[:60] or None


def what_fails(v: Verdict, sig: Signature | None) -> str:
    """The failure in a maintainer's words: `C++ compile error`, `wrong results (silent)`, `crash (SIGSEGV)`."""
    iso = v.isolation
    if v.run.more_accurate:  # no wrong answer: compiled is the closer to float64, and the user needs eager's bits
        return "differs from eager's bits (compiled is the more accurate)"
    if iso.kind == OutcomeKind.ACCURACY:
        return "wrong results (silent), compiled differs from eager and float64"
    if iso.kind == OutcomeKind.CRASH:
        return f"crash ({sig.exc_type})" if sig and sig.exc_type else "crash"
    if iso.kind == OutcomeKind.HANG:
        return "hang"
    if iso.kind == OutcomeKind.EXIT:
        return "the script's own check fails"
    cause = (sig.cause or "").split(" @ ", 1)[0] if sig else ""
    if sig and sig.text and (not cause or cause == sig.short()):  # the cause is the exception itself: as it was said
        cause = sig.said()
    text = cause or (sig.short() if sig else "failure")
    if sig and sig.inside():  # a wrapper's message says the same for every error it holds: the one it holds
        text = sig.told()
    if "CppCompileError" in text:
        return "C++ compile error"
    if "CompilationError" in text and "triton" in text.lower() + str((sig and sig.frame) or "").lower():
        return "Triton compile error"
    if sig and sig.exc_type == "AssertionError" and not sig.frame:  # the script's own check, not torch's
        return "wrong results (the script's own check fails)"
    return text[:90]


def device_of(v: Verdict, cuda: bool) -> str:
    return "[cuda]" if cuda or v.isolation.cuda_fault else "[cpu]"


def title(v: Verdict, cuda: bool = False) -> str:
    """`[inductor][cpu] aten.relu lowering: C++ compile error` and the like."""
    iso = v.isolation
    sig = Signature.from_dict(iso.signature) if iso.signature else None
    stage = iso.failing_stage or ""
    # export() itself raised (#20): what failed, and where in the user's code
    if iso.export and iso.export.get("kind"):
        at = f" at {iso.export['line']}" if iso.export.get("line") else ""
        return f"[torch.export] {iso.export['kind']}{at}: `{iso.export.get('guard') or sig and sig.said()}`"
    if stage in COMPONENT:
        head = f"[{COMPONENT[stage]}]" + (device_of(v, cuda) if stage == "inductor" else "")
    elif stage:
        head = f"[torch.compile] custom backend `{stage}`"
    else:
        head = "[torch.compile]"
    where = ""
    if v.subsystem:
        name = v.subsystem.get("name", "")
        op = op_name(v.subsystem.get("detail"))
        where = " ".join(w for w in (op, SUBSYSTEM_WORDS.get(name, name)) if w)
    elif iso.meta_kernel and iso.meta_kernel.get("op"):
        where = f"{iso.meta_kernel['op']} fake kernel"
    return f"{head} {where + ': ' if where else ''}{what_fails(v, sig)}"


def labels(v: Verdict, cuda: bool = False) -> list:
    """The labels PyTorch's triage would put on this issue, from the ablation and the failure kind."""
    iso = v.isolation
    found = ["oncall: pt2"]
    found += STAGE_LABELS.get(iso.failing_stage or "", [])
    if iso.failing_stage == "inductor" and not (cuda or iso.cuda_fault):
        found.append("oncall: cpu inductor")
    found += KIND_LABELS.get(iso.kind or "", [])
    sig = Signature.from_dict(iso.signature) if iso.signature else None
    if sig and sig.exc_type == "AssertionError" and not sig.frame:  # wrong values the script's own check caught
        found.append("module: correctness (silent)")
    if v.subsystem:
        found += SUBSYSTEM_LABELS.get(v.subsystem.get("name", ""), [])
    if (iso.compile_args or {}).get("dynamic"):
        found.append("module: dynamic shapes")
    if iso.failing_stage == "eager" and sig and (sig.exc_type == "Unsupported" or "graph break" in sig.short().lower()):
        found.append("module: graph breaks")
    return list(dict.fromkeys(found))
