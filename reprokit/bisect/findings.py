"""What the verdict says besides the stage: a wrong fake kernel (crossref), memory that only compiled code needs,
the piece a user backend handed inductor, and a failure of Dynamo itself."""

from __future__ import annotations

import re
from dataclasses import replace

from reprokit.bisect.session import Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome
from reprokit.data.stages import CROSSREF
from reprokit.data.trial_files import trial_record

# CrossRefFakeMode's words: "When comparing the output of ns.op.overload on FakeTensor and concrete Tensors, found
# mismatched tensor metadata: <what>"
_CROSSREF_TEXT = re.compile(
    r"comparing the output of (\S+) on FakeTensor and concrete Tensors, found mismatched "
    r"tensor metadata: ([^\n]*)"
)


def meta_kernel_finding(s: Session, found: Isolation, original: Outcome) -> Isolation:
    """The crossref stage is the first to fail: name the operator and the mismatch, and chase that failure from
    here on (graph, minify), since it is the cause the compiled run's own failure most likely follows from."""
    outcome = s.stage_outcomes[CROSSREF]
    m = _CROSSREF_TEXT.search(outcome.traceback or "")
    meta = {
        "op": m.group(1) if m else None,
        "mismatch": m.group(2).strip() if m else None,
        "compiled_failure": original.signature.short(),
        "trial": outcome.trial_dir,
    }
    found = replace(found, meta_kernel=meta)
    if s.target is None or not s.target.matches(outcome.signature):
        s.others.pop(outcome.signature.short(), None)  # no longer another failure: the one chased
        s.chase(outcome.signature)
        found = replace(found, signature=outcome.signature.to_dict(), kind=outcome.kind)
    op = f" of {meta['op']}" if m else ""
    what = f" ({meta['mismatch']})" if m else ""
    return say(
        found,
        f"the crossref stage fails first: the fake (meta) kernel{op} disagrees with its real kernel{what}; "
        f"the compiled run's failure ({meta['compiled_failure']}) likely follows from it, since "
        "the compiler plans shapes, dtypes and strides from fake kernels: fix the fake kernel "
        "(register_fake), then run again",
    )


def memory_finding(found: Isolation, original: Outcome, baseline: Outcome) -> Isolation:
    """Out of memory compiled, not eager: both peaks, and the finding in words."""
    eager = trial_record(baseline.trial_dir).get("peak_memory") or {}
    compiled = trial_record(original.trial_dir).get("peak_memory") or {}
    key = "cuda_mib" if "cuda_mib" in compiled or "cuda_mib" in eager else "rss_mib"
    memory = {
        "compiled_peak_mib": compiled.get(key),
        "eager_peak_mib": eager.get(key),
        "measure": "CUDA max allocated" if key == "cuda_mib" else "peak resident set (ru_maxrss)",
    }
    return say(
        replace(found, kind="out_of_memory", memory=memory),
        f"compiled needs more memory than eager: the compiled run runs out of memory "
        f"({original.signature.exc_type}; peak {_mib(memory['compiled_peak_mib'])} before it did) while "
        f"eager passes (peak {_mib(memory['eager_peak_mib'])})",
    )


def say(found: Isolation, text: str) -> Isolation:
    """The isolation with a sentence added to its message."""
    return replace(found, message=f"{found.message}; {text}" if found.message else text)


def _mib(value) -> str:
    return "unknown" if value is None else f"{value:.0f} MiB"


def pieces_finding(found: Isolation, original: Outcome) -> Isolation:
    """A user backend that had inductor compile pieces of its graph: how many, and the one that failed."""
    pieces = trial_record(original.trial_dir).get("inductor_pieces") or []
    if not pieces:
        return found
    failed = next((p for p in pieces if p.get("failed")), None)
    if failed is None and original.failed and original.kind in (OutcomeKind.CRASH, OutcomeKind.HANG):
        failed = pieces[-1]  # the process died in the last compile it started
    found = replace(found, inductor_pieces={"count": len(pieces), "failed": failed, "pieces": pieces})
    if failed is None:
        return found
    return say(
        found,
        f"the backend {found.user_backend!r} had inductor compile {len(pieces)} pieces; piece {failed['piece']} "
        f"({failed['nodes']} nodes: {piece_ops(failed)}) failed",
    )


def piece_ops(piece: dict, limit: int = 6) -> str:
    """The operators of a piece, short: "relu, add, ..." ("aten.relu.default" -> "relu")."""
    names = [op.split(".")[1] if op.startswith("aten.") and op.count(".") >= 2 else op for op in piece["ops"]]
    return ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")


def dynamo_message(original: Outcome) -> str | None:
    """Dynamo failed before any graph reached a backend (a hang, a crash or an error while tracing)."""
    if original.graphs or not original.compiled:
        return None
    what = {"hang": "hung", "crash": "crashed"}.get(original.kind, "failed")
    return (
        f"torch.compile {what} before any graph reached a backend: the failure is in Dynamo (its tracing or "
        "bytecode), not in a compiler stage"
    )
