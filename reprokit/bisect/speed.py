"""bisect --kind slow: a compiled run slower than eager is the failure; and the compile modes, with their speed."""

from __future__ import annotations

import dataclasses
from typing import Any

from reprokit.bisect.session import Session
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.signature import Signature

SLOW_STAGE_MEANING = {
    "eager": "Dynamo alone (backend=eager) is already slower than eager: the cost is Dynamo's guards and frame "
    "evaluation or its graph breaks, not generated code; fewer, larger compiled regions help, a different "
    "backend will not",
    "aot_eager": "AOT autograd's tracing and runtime wrappers make it slower; Dynamo alone is not",
    "aot_eager_decomp_partition": "the decompositions or the partitioner make it slower; AOT autograd alone is not",
    "inductor": "inductor's generated code is slower than eager; the stages before it are not",
}


class SpeedJudge:
    """Re-judges finished trials: a passing compiled run whose calls are slower than eager's by more than the
    threshold fails with kind "slow". The eager reference is the no-compile baseline, the first trial."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.eager_observed: dict | None = None

    def __call__(self, spec: TrialSpec, outcome: Outcome) -> Outcome:
        from reprokit.data.trial_files import read_observed
        from reprokit.doctor.speed import measure_speed

        if spec.stage == "none":
            if self.eager_observed is None and outcome.kind == OutcomeKind.PASS:
                self.eager_observed = read_observed(outcome.trial_dir)
            return outcome
        if outcome.kind != OutcomeKind.PASS or self.eager_observed is None:
            return outcome
        speed = measure_speed(self.eager_observed, read_observed(outcome.trial_dir))
        if speed.speedup is None or speed.speedup * (1 + self.threshold) >= 1.0:
            return dataclasses.replace(outcome, note=speed.verdict)
        return dataclasses.replace(
            outcome,
            kind="slow",
            note=speed.verdict,
            signature=Signature("slow", None, f"compiled slower than eager by more than {self.threshold:.0%}", None),
        )


def modes(s: Session, original: Outcome) -> list:
    """The script under each torch.compile mode and dynamic setting, with its speed."""
    args = original.compile_args or {}
    variants: list[dict[str, Any]] = [
        {"mode": m} for m in (None, "reduce-overhead", "max-autotune") if m != args.get("mode")
    ]
    variants += [{"dynamic": d} for d in (True, False) if d != args.get("dynamic")]
    outcomes = s.runner.map(
        [s.spec("user", "mode-" + "-".join(f"{k}={v}" for k, v in c.items()), compile_overrides=c) for c in variants]
    )
    rows = []
    for c, out in zip(variants, outcomes):
        if out is None:
            continue
        rows.append(
            {
                "mode": c.get("mode", args.get("mode")),
                "dynamic": c.get("dynamic", args.get("dynamic")),
                "kind": out.kind,
                "same": s.fails_same(out),
                "speed": out.note,
                "trial": out.trial_dir,
            }
        )
    s.emit(Event.MODES, rows=rows)
    return rows
