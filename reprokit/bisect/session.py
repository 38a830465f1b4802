"""What every step of a bisect run shares: its options, the runner, the failure being chased, other bugs seen."""

from __future__ import annotations

import copy
import dataclasses
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from reprokit.bisect.steady import describe
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.records import Outcome, Signature, TrialSpec, file_hash
from reprokit.errors import NothingToIsolate
from reprokit.trial.runner import Runner

Emit = Callable[..., None]

# Logging only: what torch compiled and why, in stderr and a TORCH_TRACE folder (tlparse reads it).
TORCH_LOGS_ENV = {"TORCH_LOGS": "graph_breaks,recompiles,aot_graphs,output_code", "TORCH_TRACE": "{trial_dir}/trace"}


@dataclasses.dataclass
class BisectOptions:
    script: str
    argv: tuple = ()
    cwd: str = ""
    timeout: float | None = None
    jobs: int = 2
    repeat: int = 1
    check_accuracy: bool = False
    configs: bool = True
    subsystems: bool = True
    kind: str = "failure"  # or "slow": compiled slower than eager by more than slow_threshold is the failure
    slow_threshold: float = 0.10
    ranks: int = 1  # --nproc-per-node: every script trial a torchrun job of this many ranks


def passes(outcome: Outcome | None) -> bool:
    """True when a trial ran and passed (a trial not run, or failing in any way, is no pass)."""
    return outcome is not None and outcome.kind == OutcomeKind.PASS


class Beside:
    """fn() run in a thread beside the bisect; result() waits for its value (or raises what it raised)."""

    def __init__(self, fn: Callable[[], Any]):
        self._out: dict = {}

        def work():
            try:
                self._out["value"] = fn()
            except BaseException as e:  # Ctrl-C's cancellation too: raised where the answer is awaited
                self._out["error"] = e

        self._thread = threading.Thread(target=work, name="beside", daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if "error" in self._out:
            raise self._out["error"]
        return self._out["value"]


@dataclasses.dataclass(frozen=True)
class Naming:
    """How a view of a session names its trials: a stage asked as another, and a prefix to every label (the export
    ladder asks inductor's narrowing of AOTInductor: "inductor" is the script with AOTInductor real, "user")."""

    stages: tuple[tuple[str, str], ...] = ()
    label_prefix: str = ""

    def stage(self, stage: str) -> str:
        return dict(self.stages).get(stage, stage)


class Session:
    """The state of one bisect run; every answer is a trial run by `runner`. The failure chased (`target`) and the
    runner's policy change through `chase` and `use_policy` alone."""

    def __init__(self, opts: BisectOptions, runner: Runner, emit: Emit, target: Signature | None = None):
        self.opts = opts
        self.runner = runner
        self._policy_lock = threading.Lock()
        self.emit = emit
        self._target = target
        self._naming = Naming()
        self.others: dict[str, dict] = {}
        self.started = time.monotonic()
        self.script_hash = file_hash(opts.script)
        self.stage_outcomes: dict[str, Outcome] = {}
        # The no-compile baseline that counts (after re-runs when it failed another way: bisect/steady.py)
        self.baseline: Outcome | None = None
        self.unsteady: list[str] = []  # one line per run that failed another way and was asked again
        # The original run's failing graph, once it fails alone the same way under graph_stage: the questions of
        # that stage are then graph trials on it, not runs of the script (bisect/saved_graph.py)
        self.graph_case: str | None = None
        self.original: Outcome | None = None  # the original run the search chases, once known
        # The original hung in a compile: every later trial's compile limit ({"seconds", "why"}: bisect/hang_limit)
        self.hang_limit: dict | None = None
        self.ladder_from_graph = False  # the stages were asked of the saved graph (bisect/saved_graph.graph_ladder)
        self.graph_stage: str | None = None
        # The graph that stands for the script, checked against eager: the original's failure was a mismatch its
        # own check found, and this graph, as of its recent call, diverges from eager (bisect/saved_graph.py)
        self.graph_accuracy = False
        self.saved_graph: tuple | None = None  # (case, graph index) once looked for: bisect/saved_graph.saved_graph
        # The script fails only with inductor's caches on (bisect/warm.py): which, and how it was shown
        self.warm_cache: dict | None = None
        self.warm_cache_runs: list = []  # (title, Outcome) of each of its runs, in order
        # The script run as written, failing where every instrumented run passed (bisect/plain.py)
        self.plain: Outcome | None = None
        self.as_written: list = []  # the runs of the script as written that answered (bisect/plain.py)
        self.reruns: tuple = ()  # more runs of the script as written, when a failure showed only once (flaky)
        self.baseline_again: Beside | None = None  # the baseline asked again, when it failed another way

    @property
    def target(self) -> Signature | None:
        """The failure the search chases: the original's, once known, or the one a finding showed it to be."""
        return self._target

    def chase(self, signature: Signature) -> Signature:
        """From now on the session chases `signature` (what a step found the failure to be); it is returned."""
        self._target = signature
        return signature

    def named(self, naming: Naming) -> Session:
        """A view of this session whose trials are named by `naming`; everything else is this session's (its
        mutable parts shared, as a wrapper forwarding to it would)."""
        view = copy.copy(self)
        view._naming = naming
        return view

    def use_policy(self, **changes) -> Runner:
        """From now on every trial of the session is asked under the runner's policy with `changes` (TrialPolicy's
        fields): the session's runner becomes that view, which shares the journal, workers and counters."""
        with self._policy_lock:  # two threads switching at once (start_round's) each keep the other's change
            self.runner = self.runner.with_policy(**changes)
        return self.runner

    def spec(self, stage: str, label: str, **kw) -> TrialSpec:
        """A trial of the user's script under `stage`, with the run's options; of the saved failing graph instead
        once it stands for the script in that stage (graph_case)."""
        stage, label = self._naming.stage(stage), self._naming.label_prefix + label
        # The modes question asks the user's own backend, inductor when a graph was adopted (bisect/saved_graph.py).
        if self.graph_case is not None and (
            stage == self.graph_stage
            or stage == "user"
            and kw.get("compile_overrides")
            and self.graph_stage == "inductor"
        ):
            for whole_script_only in ("only_graph", "other_stage", "capture_failing"):
                kw.pop(whole_script_only, None)
            return TrialSpec(
                mode="graph",
                stage=self.graph_stage,
                case=self.graph_case,
                check_accuracy=self.graph_accuracy,
                label=label,
                **kw,
            )
        return self.script_spec(stage, label, **kw)

    def script_spec(self, stage: str, label: str, **kw) -> TrialSpec:
        """A trial of the user's script under `stage`, with the run's options, whatever graph was adopted."""
        o = self.opts
        return bare_spec(self, stage, label, check_accuracy=o.check_accuracy, observe=o.kind == "slow", **kw)

    def fails_same(self, outcome: Outcome | None) -> bool:
        """True when the trial fails the way the original did; other failures are noted as other bugs."""
        if outcome is None:
            return False
        if self.target is not None and self.target.matches(outcome.signature):
            return True
        if outcome.failed:
            key = outcome.signature.short()
            self.others.setdefault(
                key,
                {
                    "signature": outcome.signature.to_dict(),
                    "trial": outcome.trial_dir,
                    "replay": os.path.basename(outcome.trial_dir or "").startswith("graph-"),
                },
            )
        return False

    def torch_logs(self, stage: str) -> Outcome:
        """The failing trial once more with torch's own structured logs on, for the report's logs/."""
        return self.runner(self.spec(stage, "torch-logs", env=TORCH_LOGS_ENV))

    def settle_baseline(self) -> None:
        """Wait for the no-compile baseline asked again beside the bisect (bisect/start.record_original), and take
        its answer: noted when it stayed broken another way; nothing to isolate when it failed the original's way."""
        if self.baseline_again is None:
            return
        baseline, runs = self.baseline_again.result()
        self.baseline_again = None
        self.baseline = baseline
        if "none" in self.stage_outcomes:
            self.stage_outcomes["none"] = baseline
        if self.target is not None and self.target.matches(baseline.signature):
            raise NothingToIsolate("the script fails without compile too in the same way: that is not a compiler bug")
        self.unsteady.insert(0, describe("the run without compile", runs, self.target))
        self.emit("note", text=self.unsteady[0])

    def finish(self, found: Isolation, decisive: dict) -> Isolation:
        """The isolation stamped with the decisive trials, the other failures seen, trial count and time."""
        self.settle_baseline()
        return dataclasses.replace(
            found,
            decisive_trials=decisive,
            other_failures=tuple(self.others.values()),
            unsteady="; ".join(self.unsteady),
            trials=self.runner.executed,
            seconds=round(time.monotonic() - self.started, 2),
        )


def bare_spec(s: Session, stage: str, label: str, **kw) -> TrialSpec:
    """A trial of the session's script, its arguments, folder and ranks under `stage`, nothing checked or timed
    beyond `kw` (a plain run's, bisect/plain.py)."""
    o = s.opts
    return TrialSpec(
        mode="script",
        stage=stage,
        script=o.script,
        argv=tuple(o.argv),
        cwd=o.cwd,
        script_hash=s.script_hash,
        ranks=o.ranks,
        label=label,
        **kw,
    )
