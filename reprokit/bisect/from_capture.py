"""`bisect --from-capture`: the bisect's questions asked of the captured failing graph, every one a graph trial.

The spec factory is the one seam: GraphBisector.spec builds graph specs on the captured case where the Bisector
builds script specs, so the subsystem and lowering search (subsystems.py, guess.py), the boundary's re-run and
torch's logs run unchanged, and the user's job never runs again.
"""

from __future__ import annotations

import dataclasses
import os

from reprokit.bisect.bisector import Bisector
from reprokit.bisect.capture_folder import CapturedFailure
from reprokit.bisect.ladder import record_stage
from reprokit.bisect.session import BisectOptions, Emit
from reprokit.bisect.speed import modes
from reprokit.bisect.subsystems import subsystem
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome, StageResult, TrialSpec
from reprokit.data.signature import Signature
from reprokit.data.stages import CONFIG_STAGES, STAGES, SUBSYSTEMS
from reprokit.trial.runner import Runner

# The ladder on a graph: Dynamo's graph as it is, then each layer of the stack ("none" and crossref need the script).
GRAPH_LADDER = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def settle_line(script: str) -> str:
    """What settles a failure the graph alone does not show: the whole job, on its own hardware."""
    return f"run `reprokit bisect {os.path.basename(script)}` on the job's hardware to settle it"


class GraphBisector(Bisector):
    """A Bisector whose every trial is a graph trial on the captured case."""

    def __init__(self, opts: BisectOptions, runner: Runner, emit: Emit, captured: CapturedFailure, case: str):
        super().__init__(opts, runner, emit)
        self.captured, self.case = captured, case
        self.chase(Signature.from_dict(captured.failure["signature"]))
        self.backward = captured.failure.get("phase") == "backward"  # its failure shows when run backward too
        # wrong numbers with no exception (bisect/diverging): every trial compares compiled against eager
        self.accuracy = captured.failure.get("kind") == "accuracy"

    def fails_same(self, outcome: Outcome | None) -> bool:
        """A hang fails the same way by running past the limit in the same phase (compile or run): a hang's
        signature is where it waits, not a traceback."""
        hang = self.target is not None and self.target.kind == OutcomeKind.HANG
        if hang and outcome is not None and outcome.kind == OutcomeKind.HANG:
            if hang_phase(outcome) == self.captured.failure.get("phase", "compile"):
                return True
        return super().fails_same(outcome) and not hang

    def spec(self, stage: str, label: str, **kw) -> TrialSpec:
        """A trial of the captured graph under `stage` (the seam: the Bisector's steps build their specs here)."""
        kw["check_accuracy"] = self.accuracy
        kw.setdefault("run_backward", self.backward)
        return TrialSpec(mode="graph", stage=stage, case=self.case, label=label, **kw)

    def isolate(self) -> Isolation:
        """The ladder on the graph, then torch's subsystem and lowering counters in the failing stage."""
        failure = self.captured.failure
        meta_args = _case_meta(self.case).get("compile_args") or {}
        found = Isolation(
            script=self.captured.script,
            kind=failure.get("kind"),
            signature=failure["signature"],
            graph=failure.get("graph"),
            graph_count=int(failure.get("graphs_seen") or 1),
            user_backend=meta_args.get("backend"),
            compile_args=meta_args,
            capture={"from": self.captured.root, "rank": self.captured.rank},
            hang_limit=(
                {"seconds": self.runner.timeout, "why": "the limit each trial was judged by"}
                if failure.get("kind") == "hang"
                else None
            ),
            graph_code=_graph_code(self.case),
        )
        ladder = self._ladder(meta_args.get("backend") or "inductor")
        found = dataclasses.replace(found, ladder=tuple(r.to_dict() for r in ladder))
        failing = next((r for r in ladder if r.same), None)
        if failing is None:
            message = (
                f"the captured graph does not fail the same way replayed alone (rank {self.captured.rank}, "
                f"graph {found.graph}){_stand_ins_line(_case_meta(self.case))}; {settle_line(found.script)}"
            )
            return self.finish(dataclasses.replace(found, message=message), decisive={})
        if failing.stage == "eager":  # Dynamo's graph run as it is, no compiler below it
            message = (
                f"the captured graph fails the same way run eagerly (rank {self.captured.rank}, graph {found.graph}): "
                "the job fails without compile too; that is not a compiler bug"
            )
            return self.finish(dataclasses.replace(found, message=message), decisive={})
        return self.in_failing_stage(found, ladder, failing, meta_args)

    def in_failing_stage(self, found: Isolation, ladder: list, failing: StageResult, meta_args: dict) -> Isolation:
        """A compiler stage fails the captured graph: the stage before it, then the counters and modes in it."""
        passing = _last_passing(ladder, failing.stage)
        found = dataclasses.replace(found, failing_stage=failing.stage, last_passing_stage=passing)
        outcome = self.stage_outcomes[failing.stage]
        decisive = {"first_failing": outcome.trial_dir}
        if passing:
            decisive["last_passing"] = self.stage_outcomes[passing].trial_dir
        deferred: list = []
        if self.opts.subsystems and failing.stage in SUBSYSTEMS:
            self.emit(Event.PHASE, name="subsystems")
            found = dataclasses.replace(found, subsystem=subsystem(self, failing.stage, outcome, confirm=False))
            if found.subsystem:
                deferred.append("confirm")
                if self.opts.configs and failing.stage in CONFIG_STAGES:
                    # a workaround for the report, on the graph, after the repro
                    deferred += ["configs", "config_set"]
        if failing.stage == "inductor" and _mode_matters(meta_args, _case_meta(self.case)):
            # As in place (Bisector.narrow): on a GPU, or with a mode the job chose, does the failure follow the mode?
            self.emit(Event.PHASE, name="modes")
            found = dataclasses.replace(found, modes=modes(self, dataclasses.replace(outcome, compile_args=meta_args)))
        message = f"from a capture (rank {self.captured.rank}, graph {found.graph}): no run of the job"
        found = dataclasses.replace(
            found,
            deferred=(*deferred, "torch_logs"),
            message=message + waiting_ranks(self.captured.summary, self.captured.rank),
        )
        return self.finish(found, decisive=decisive)

    def _ladder(self, backend: str) -> list:
        """Every stage of the graph ladder at once (graph trials are short); the user's own backend last when it
        is not inductor."""
        stages = list(GRAPH_LADDER) + ([] if backend == "inductor" else ["user"])
        self.emit(Event.LADDER_START, stages=stages)
        outcomes = self.runner.map([self.spec(st, f"graph-stage-{st}") for st in stages])
        out = []
        for stage, outcome in zip(stages, outcomes):
            outcome = outcome or Outcome.from_dict({"kind": "skip", "signature": {"kind": "skip"}, "seconds": 0.0})
            same = self.fails_same(outcome) or (stage == "eager" and same_error(self.target, outcome.signature))
            out.append(record_stage(self, stage, outcome, same))
        return out


def _last_passing(ladder: list, failing: str) -> str | None:
    """The last stage before the failing one that passed (one that failed another way is not where it starts)."""
    if failing not in STAGES:
        return None
    before = [
        r.stage
        for r in ladder
        if r.kind == OutcomeKind.PASS and r.stage != failing and STAGES.index(r.stage) < STAGES.index(failing)
    ]
    return before[-1] if before else None


def same_error(target: Signature | None, other: Signature | None) -> bool:
    """The same exception and message wherever it was raised: eager calls torch's function, where the compiled
    stages call its aten op, so the frame that raised differs even when the job fails without compile too."""
    if target is None or other is None or target.kind != OutcomeKind.EXCEPTION or other.kind != OutcomeKind.EXCEPTION:
        return False
    return (target.exc_type, target.message) == (other.exc_type, other.message)


def waiting_ranks(summary: dict, rank: str) -> str:
    """ "; rank 1 was waiting in a collective (all_reduce)": the other ranks the ending signal found doing something,
    as capture.json says (capture/ending.py); "" when none."""
    ranks = summary.get("ranks") or {}
    said = [
        f"rank {r} was {line['ended_in']}" for r, line in sorted(ranks.items()) if r != rank and line.get("ended_in")
    ]
    return "; " + ", ".join(said) if said else ""


def hang_phase(outcome: Outcome) -> str:
    """Where a graph trial that timed out was: its state is saved once the graph compiled (child/graph.py)."""
    return "run" if outcome.graphs else "compile"


def _mode_matters(compile_args: dict, meta: dict) -> bool:
    """The job compiled with inductor, and on a GPU or with an explicit mode (the in-place bisect's rule)."""
    on_gpu = any(str(m.get("device", "cpu")) != "cpu" for m in meta.get("inputs") or [] if isinstance(m, dict))
    return compile_args.get("backend") in (None, "inductor") and (on_gpu or bool(compile_args.get("mode")))


def _case_meta(case: str) -> dict:
    from reprokit.data.rundir import read_json

    return read_json(os.path.join(case, "meta.json")) or {}


def _stand_ins_line(meta: dict) -> str:
    """What the replay could not show: the inputs replaced by stand-ins whose values a failure may depend on."""
    matter = meta.get("values_matter") or []
    if not matter:
        return ""
    named = ", ".join(f"{name} (input {i}: {why})" for i, name, why in matter)
    return (
        f"; its stand-ins cannot show a failure that depends on the values of {named}, which the capture replaced: "
        "capture again with a larger --max-input-bytes or with --keep-inputs-on-disk"
    )


def _graph_code(case: str) -> str | None:
    try:
        with open(os.path.join(case, "graph.py")) as f:
            return f.read()
    except OSError:
        return None
