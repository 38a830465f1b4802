"""The one place the unit tests build domain objects: a Runner that answers trials from a table, the outcomes it
answers with, and the Session, Bisector, Problem and graph minifier they drive. When the refactors reshape those
constructors (a frozen Verdict, a TrialPolicy on the Runner, Outcome kinds as an enum), only this file changes."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence

from reprokit.bisect.bisector import Bisector
from reprokit.bisect.session import BisectOptions, Session
from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.fx.graphcase import Edit, GraphShape, NodeInfo
from reprokit.minify.graph import GraphOracle, graph_problem
from reprokit.minify.inscript import ScriptOracle
from reprokit.search.problem import Problem
from reprokit.source.reduce import source_problem
from reprokit.trial.ordered_map import ordered_map
from reprokit.trial.policy import TrialPolicy
from reprokit.trial.repeat import ask_until_it_fails, map_until_it_fails
from reprokit.trial.runner import budget_spent

# The failure a table chases, and one that is another bug.
BUG = Signature(kind="exception", exc_type="RuntimeError", message="bad lowering of relu", frame="lowering.py:relu")
OTHER = Signature(kind="exception", exc_type="ValueError", message="shape mismatch", frame="fake.py:meta")

Answer = Callable[[TrialSpec], Outcome]


def passed(seconds: float = 1.0, **kw) -> Outcome:
    """A trial that passed."""
    return Outcome(kind="pass", signature=Signature(kind="pass"), seconds=seconds, **kw)


def failed(signature: Signature = BUG, seconds: float = 1.0, **kw) -> Outcome:
    """A trial that failed with `signature` (BUG: the failure chased)."""
    return Outcome(kind=signature.kind, signature=signature, seconds=seconds, **kw)


def hung(seconds: float = 120.0, **kw) -> Outcome:
    return Outcome(kind="hang", signature=Signature(kind="hang"), seconds=seconds, **kw)


def original(graphs: int = 1, **kw) -> Outcome:
    """The script as written, compiled with inductor, failing with BUG."""
    kw.setdefault("compiled", True)
    kw.setdefault("user_backend", "inductor")
    return failed(graphs=graphs, **kw)


def is_spent(outcome: Outcome | None) -> bool:
    """The answer a trial gets once the run's budget is spent."""
    return outcome is not None and outcome.kind == OutcomeKind.BUDGET_SPENT


class FakeRunner:
    """trial.Runner's calling protocol, with `answer(spec) -> Outcome` in place of a trial process.

    As the Runner does: a question asked before (the same key) is answered again without running (its journal);
    `map` answers in order and, once stop(i, outcome) holds, leaves the specs after i unasked (None); a trial asked
    once `budget` trials have run is not run (a budget_spent Outcome, counted in over_budget) unless it checks a
    repro; its frozen TrialPolicy (switches, judge, tries) applies to every trial, and `with_policy` hands out views
    that share the journal and counters. `asked` lists every spec that ran, in order (the unit tests count trials
    with it and with `executed`)."""

    def __init__(self, answer: Answer, jobs: int = 2, timeout: float = 600.0, budget: int | None = None):
        self.answer, self.jobs = answer, jobs
        self.policy = TrialPolicy(timeout=timeout)
        self._shared = _Shared(budget)

    def with_policy(self, **changes) -> FakeRunner:
        view = copy.copy(self)
        view.policy = self.policy.replace(**changes)
        return view

    @property
    def timeout(self) -> float:
        return self.policy.timeout

    @property
    def env(self):
        return self.policy.env

    @property
    def executed(self) -> int:
        return self._shared.executed

    @property
    def over_budget(self) -> int:
        return self._shared.over_budget

    @property
    def asked(self) -> list[TrialSpec]:
        return self._shared.asked

    @property
    def budget(self) -> int | None:
        return self._shared.budget

    @budget.setter
    def budget(self, trials: int | None) -> None:
        self._shared.budget = trials  # the table's stand-in for --budget's deadline passing

    def __call__(self, spec: TrialSpec, limit=None, how: Callable | None = None) -> Outcome:
        if self.policy.tries > 1:
            return ask_until_it_fails(self._ask, spec, self.policy)
        return self._ask(spec)

    def _ask(self, spec: TrialSpec) -> Outcome:
        spec = self.policy.switched(spec)
        key, shared = spec.key(), self._shared
        with shared.lock:
            if key in shared.answers:
                return shared.answers[key]
            if shared.budget is not None and shared.executed >= shared.budget and not _checks_a_repro(spec):
                shared.over_budget += 1
                return budget_spent()
            shared.executed += 1
            shared.asked.append(spec)
        outcome = self.answer(spec)
        if self.policy.judge is not None:
            outcome = self.policy.judge(spec, outcome)
        with shared.lock:
            shared.answers[key] = outcome
        return outcome

    def map(
        self, specs: Iterable[TrialSpec], stop: Callable[[int, Outcome], bool] | None = None, limit: float | None = None
    ) -> list:
        # One at a time (width 1): what `jobs` slots would have started beside a stopping trial is never asked here,
        # so the trial counts the tests assert are the fewest the rule allows, the same on every run.
        def one_round(specs: list, stop) -> list:
            return ordered_map(self._ask, specs, 1, stop)

        if self.policy.tries > 1:
            return map_until_it_fails(one_round, list(specs), stop, self.policy)
        return one_round(list(specs), stop)

    def labels(self) -> list[str]:
        """The labels of the trials that ran, in order."""
        return [s.label for s in self.asked]

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Shared:
    """What every view of one FakeRunner shares, as a Runner's views share its journal and counters."""

    def __init__(self, budget: int | None):
        self.budget = budget
        self.executed = 0
        self.over_budget = 0
        self.asked: list[TrialSpec] = []
        self.answers: dict[str, Outcome] = {}
        self.lock = threading.Lock()


def _replace(spec: TrialSpec, **kw) -> TrialSpec:
    return dataclasses.replace(spec, **kw)


def _checks_a_repro(spec: TrialSpec) -> bool:
    return spec.mode == "repro" or spec.fresh_interpreter


def until_it_fails(inner: FakeRunner, tries: int, target: Signature = BUG) -> FakeRunner:
    """A flaky failure's runner: each question asked of `inner` up to `tries` times until it fails `target`'s way."""
    return inner.with_policy(tries=tries, target=target)


class Events:
    """The emit callback: every event the domain reports, kept as (name, fields)."""

    def __init__(self):
        self.seen: list[tuple[str, dict]] = []

    def __call__(self, event: str, /, **fields) -> None:
        self.seen.append((event, fields))

    def notes(self) -> list[str]:
        return [f["text"] for n, f in self.seen if n == "note"]


def options(**kw) -> BisectOptions:
    """The bisect's options for a script that exists nowhere: every answer comes from the table."""
    kw.setdefault("script", "train.py")
    return BisectOptions(**kw)


def session(answer: Answer, target: Signature | None = BUG, jobs: int = 2, **opts) -> Session:
    """A Session over a FakeRunner, chasing `target` (as record_original sets it)."""
    return Session(options(**opts), FakeRunner(answer, jobs=jobs), Events(), target=target)


def bisector(answer: Answer, jobs: int = 2, budget: int | None = None, **opts) -> Bisector:
    """A Bisector over a FakeRunner; its isolate() runs the whole search from the first round."""
    return Bisector(options(**opts), FakeRunner(answer, jobs=jobs, budget=budget), Events())


def runner_of(s: Session) -> FakeRunner:
    assert isinstance(s.runner, FakeRunner)
    return s.runner


def events_of(s: Session) -> Events:
    assert isinstance(s.emit, Events)
    return s.emit


def trial_folder(root: str, name: str, record: dict) -> str:
    """A trial's folder holding the result.json its child would have written (what configs and guesses read)."""
    folder = os.path.join(root, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(record, f)
    return folder


def verdict(**kw) -> Verdict:
    """The bisect's verdict as minify reads it (flaky, failing stage, ...)."""
    return Verdict.from_dict(dict(script="train.py", argv=[], **kw))


def saved_failing_graph(root: str, name: str = "original") -> str:
    """A trial folder holding the failing graph its run saved as it raised (failing_case/, as child/router writes
    it); the folder, for the original's trial_dir."""
    case = os.path.join(root, name, "failing_case")
    os.makedirs(case, exist_ok=True)
    with open(os.path.join(case, "meta.json"), "w") as f:
        json.dump({"node_count": 5}, f)
    return os.path.join(root, name)


def problem(initial, fails_same: Callable, size: Callable = len, **kw) -> Problem:
    """A search.Problem: the best so far and the one acceptance rule."""
    return Problem(initial, fails_same, size, **kw)


# -- the graph minifier's inputs ------------------------------------------------------------------------------------
def chain_graph(*ops: str) -> GraphShape:
    """x -> op0 -> op1 -> ... -> output: a placeholder, then one node per op, each reading the one before."""
    nodes = [NodeInfo("x", "placeholder", "x", (), True)]
    for i, op in enumerate(ops):
        nodes.append(NodeInfo(f"{op}_{i}", "call_function", f"torch.ops.aten.{op}.default", (nodes[-1].name,), True))
    return GraphShape(nodes=nodes, outputs=(nodes[-1].name,))


def graph_of(nodes: Sequence[tuple], outputs: Sequence[str]) -> GraphShape:
    """A graph from (name, op, deps) rows: names without deps are placeholders."""
    infos = [
        NodeInfo(name, "call_function" if deps else "placeholder", f"torch.ops.aten.{op}.default", tuple(deps), True)
        for name, op, deps in nodes
    ]
    return GraphShape(nodes=infos, outputs=tuple(outputs))


def edit_of(spec: TrialSpec) -> Edit:
    """The edit a graph trial runs (what the table reads)."""
    assert spec.edit is not None
    return Edit.from_dict(spec.edit)


def graph_minifier(
    answer: Answer, shape: GraphShape, run_dir: str, jobs: int = 2, target: Signature = BUG, budget: int | None = None
) -> tuple[Problem, GraphOracle, FakeRunner]:
    """(problem, oracle, runner): the graph minifier's search over edits of `shape`, its trials answered by `answer`."""
    runner = FakeRunner(answer, jobs=jobs, budget=budget)
    oracle = GraphOracle(runner, shape, "case", "inductor", target, check_accuracy=False, run_backward=False)  # type: ignore[arg-type]
    os.makedirs(run_dir, exist_ok=True)
    return graph_problem(oracle, shape.original(), RunDir(run_dir), lambda *a, **k: None), oracle, runner


def script_minifier(answer: Answer, shape: GraphShape, run_dir: str, graph: int = 0) -> tuple[Problem, FakeRunner]:
    """(problem, runner): the graph minified inside the running script, each edit spliced into graph `graph` of a
    whole-script trial (the capture trial's spec is the base)."""
    runner = FakeRunner(answer)
    base = TrialSpec(mode="script", stage="inductor", script="train.py", only_graph=graph, save_graph=graph)
    oracle = ScriptOracle(runner, shape, "case", "inductor", BUG, base)
    os.makedirs(run_dir, exist_ok=True)
    return graph_problem(oracle, shape.original(), RunDir(run_dir), lambda *a, **k: None), runner


# -- the source minifier's inputs -----------------------------------------------------------------------------------
def source_minifier(answer: Answer, script: str, run_dir: str, target: Signature = BUG) -> tuple[Problem, FakeRunner]:
    """(problem, runner): the source reduction of `script`'s text, each candidate a trial answered by `answer` (which
    reads the candidate's text with `source_of`)."""
    os.makedirs(run_dir, exist_ok=True)
    run = RunDir(run_dir)
    run.write_json("run.json", {"options": {"cwd": run_dir}})
    runner = FakeRunner(answer)
    v = verdict(signature=target.to_dict(), failing_stage="eager").isolation
    return source_problem(run, v, runner, script, cwd=run_dir), runner


def source_of(spec: TrialSpec) -> str:
    """The text of the script a trial runs (a candidate the source minifier wrote)."""
    with open(spec.script) as f:
        return f.read()
