"""What the verdict says besides the stage: a wrong fake kernel (crossref), memory that only compiled code needs,
the piece a user backend handed inductor, and a failure of Dynamo itself."""

from __future__ import annotations

import re

from reprokit.bisect.session import Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, Verdict
from reprokit.data.stages import CROSSREF
from reprokit.data.trial_files import trial_record

# CrossRefFakeMode's words: "When comparing the output of ns.op.overload on FakeTensor and concrete Tensors, found
# mismatched tensor metadata: <what>"
_CROSSREF_TEXT = re.compile(
    r"comparing the output of (\S+) on FakeTensor and concrete Tensors, found mismatched "
    r"tensor metadata: ([^\n]*)"
)


def meta_kernel_finding(s: Session, v: Verdict, original: Outcome) -> None:
    """The crossref stage is the first to fail: name the operator and the mismatch, and chase that failure from
    here on (graph, minify), since it is the cause the compiled run's own failure most likely follows from."""
    outcome = s.stage_outcomes[CROSSREF]
    m = _CROSSREF_TEXT.search(outcome.traceback or "")
    v.meta_kernel = {
        "op": m.group(1) if m else None,
        "mismatch": m.group(2).strip() if m else None,
        "compiled_failure": original.signature.short(),
        "trial": outcome.trial_dir,
    }
    if s.target is None or not s.target.matches(outcome.signature):
        s.others.pop(outcome.signature.short(), None)  # no longer another failure: the one chased
        s.chase(outcome.signature)
        v.signature = outcome.signature.to_dict()
        v.kind = outcome.kind
    op = f" of {v.meta_kernel['op']}" if m else ""
    what = f" ({v.meta_kernel['mismatch']})" if m else ""
    say(
        v,
        f"the crossref stage fails first: the fake (meta) kernel{op} disagrees with its real kernel{what}; "
        f"the compiled run's failure ({v.meta_kernel['compiled_failure']}) likely follows from it, since "
        "the compiler plans shapes, dtypes and strides from fake kernels: fix the fake kernel "
        "(register_fake), then run again",
    )


def memory_finding(v: Verdict, original: Outcome, baseline: Outcome) -> None:
    """Out of memory compiled, not eager: both peaks, and the finding in words."""
    eager = trial_record(baseline.trial_dir).get("peak_memory") or {}
    compiled = trial_record(original.trial_dir).get("peak_memory") or {}
    key = "cuda_mib" if "cuda_mib" in compiled or "cuda_mib" in eager else "rss_mib"
    v.kind = "out_of_memory"
    v.memory = {
        "compiled_peak_mib": compiled.get(key),
        "eager_peak_mib": eager.get(key),
        "measure": "CUDA max allocated" if key == "cuda_mib" else "peak resident set (ru_maxrss)",
    }
    say(
        v,
        f"compiled needs more memory than eager: the compiled run runs out of memory "
        f"({original.signature.exc_type}; peak {_mib(v.memory['compiled_peak_mib'])} before it did) while "
        f"eager passes (peak {_mib(v.memory['eager_peak_mib'])})",
    )


def say(v: Verdict, text: str) -> None:
    """Add a sentence to the verdict's message."""
    v.message = f"{v.message}; {text}" if v.message else text


def _mib(value) -> str:
    return "unknown" if value is None else f"{value:.0f} MiB"


def pieces_finding(v: Verdict, original: Outcome) -> None:
    """A user backend that had inductor compile pieces of its graph: how many, and the one that failed."""
    pieces = trial_record(original.trial_dir).get("inductor_pieces") or []
    if not pieces:
        return
    failed = next((p for p in pieces if p.get("failed")), None)
    if failed is None and original.failed and original.kind in (OutcomeKind.CRASH, OutcomeKind.HANG):
        failed = pieces[-1]  # the process died in the last compile it started
    v.inductor_pieces = {"count": len(pieces), "failed": failed, "pieces": pieces}
    if failed is not None:
        note = (
            f"the backend {v.user_backend!r} had inductor compile {len(pieces)} pieces; piece {failed['piece']} "
            f"({failed['nodes']} nodes: {piece_ops(failed)}) failed"
        )
        say(v, note)


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
