"""The graph passes: cut a captured FX graph down while it fails the same way.

The trials answer "does this edit fail the same way?" (GraphOracle); search.Problem decides what becomes the
best edit; each pass proposes smaller edits of the graph it is given.
"""

from __future__ import annotations

from collections.abc import Sequence

from reprokit.data.events import Emit, Event
from reprokit.data.records import TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.fx.graphcase import Edit, GraphShape
from reprokit.search import Pass, Problem, Share, ddmin, find_boundary, run_passes
from reprokit.trial.runner import Runner

REFUSED_KEPT = 20  # smaller graphs that failed differently, kept for minify_refused.json


def graph_share(trial_seconds: float) -> float:
    """Seconds the graph passes may spend: four minutes, or thirty of their first trials (issue #32: a 35-node
    graph whose cuts mostly failed another way ran 45 trials in 600 s and had nothing). When they run out, the
    smallest graph so far that fails the same way (the original one at worst) is verified as repro.py."""
    return max(240.0, 30 * trial_seconds)


class GraphOracle:
    """Runs edited graphs as trials; notes the smaller graphs that failed, but differently (refused slippage).
    Once its share of time is spent (from the first trials' cost), every edit is refused without a trial."""

    def __init__(
        self,
        runner: Runner,
        shape: GraphShape,
        case: str,
        stage: str,
        target: Signature,
        check_accuracy: bool,
        run_backward: bool,
        precheck=None,
        emit: Emit = lambda *a, **k: None,
    ):
        self.runner, self.shape, self.case, self.stage, self.target = runner, shape, case, stage, target
        self.check_accuracy, self.run_backward = check_accuracy, run_backward
        self.refused: list = []
        # graph_share is looked up per call (a test may patch it); the run's time plan bounds it (minify/plan.py)
        self.share = Share(lambda seconds: graph_share(seconds), plan=runner.policy.plan)
        # The fake-tensor check (trial/precheck.FakeCheck), asked of every cut once one has failed another way:
        # a graph whose cuts run needs no checker process (and a forked trial that cannot run costs 0.3 s), one
        # whose cuts fail is spared a trial per cut that cannot run (12-17 s each where trials start cold).
        self.precheck, self.emit = precheck, emit
        self.armed = False
        self.prechecked: list = []  # the edits it refused: no trial ran them

    def spec(self, edit: Edit) -> TrialSpec:
        return TrialSpec(
            mode="graph",
            stage=self.stage,
            case=self.case,
            edit=edit.to_dict(),
            check_accuracy=self.check_accuracy,
            run_backward=self.run_backward,
            label=f"minify-{self.shape.size(edit)}n",
        )

    def fails_same(self, edit: Edit | None) -> bool:
        return self.first_failing([edit]) == 0

    def first_failing(self, edits: Sequence) -> int | None:
        """Index of the first edit that fails the same way; up to `jobs` of them are tried at once."""
        if self.share.spent():
            return None
        runnable = [(i, e) for i, e in enumerate(edits) if self._worth_a_trial(e)]
        if not runnable:
            return None
        outcomes = self._started(self.runner.map([self.spec(e) for _, e in runnable], stop=self._stop))
        for (i, edit), outcome in zip(runnable, outcomes):
            if outcome is not None and self.judge(edit, outcome):
                return i
        return None

    def _stop(self, _: int, outcome) -> bool:
        """No cut starts after one fails the same way, nor once the share is spent (a batch is not run out past it)."""
        return self.target.matches(outcome.signature) or self.share.spent()

    def failing_mask(self, edits: Sequence) -> list:
        """For a monotone search: all of them asked at once, each answer kept."""
        if self.share.spent():
            return [False] * len(edits)
        worth = [self._worth_a_trial(e) for e in edits]
        outcomes = iter(self._started(self.runner.map([self.spec(e) for e, w in zip(edits, worth) if w])))
        return [bool(w and self.judge(e, next(outcomes))) for e, w in zip(edits, worth)]

    def _worth_a_trial(self, edit: Edit | None) -> bool:
        """An edit that computes something and, once the check is armed, runs on fake tensors."""
        if edit is None or not edit.computed:
            return False
        why = self.precheck.refusal(edit.to_dict()) if self.armed and self.precheck is not None else None
        if why is None:
            return True
        nodes = self.shape.size(edit)
        self.prechecked.append({"nodes": nodes, "edit": edit.to_dict(), "why": why})
        self.emit(
            Event.MINIFY_STEP,
            what=f"refused without a trial: it does not run on fake tensors ({why[:100]})",
            nodes=nodes,
        )
        return False

    def _started(self, outcomes: list) -> list:
        """The outcomes; the first batch sets the share from its slowest trial."""
        ran = [o.seconds for o in outcomes if o is not None and o.seconds]
        if ran:
            self.share.start(max(ran))
        return outcomes

    def judge(self, edit: Edit, outcome) -> bool:
        if self.target.matches(outcome.signature):
            return True
        if outcome.failed:
            self.armed = True
            if len(self.refused) < REFUSED_KEPT:
                self.refused.append({"nodes": self.shape.size(edit), "signature": outcome.signature.to_dict()})
        return False


def graph_problem(oracle: GraphOracle, start: Edit, run_dir: RunDir, emit: Emit) -> Problem:
    """The reduction problem over edits of the oracle's graph, persisting every improvement to minify.json."""
    shape = oracle.shape

    def on_improve(edit: Edit) -> None:
        # Written at every improvement: a signal or a crash keeps the smallest failing graph (minify --resume).
        run_dir.write_json("minify.json", {"case": oracle.case, "best": edit.to_dict(), "nodes": shape.size(edit)})
        emit(Event.MINIFY_STEP, what="smaller graph fails the same way", nodes=shape.size(edit))

    return Problem(
        start,
        oracle.fails_same,
        shape.size,
        first_failing=oracle.first_failing,
        failing_mask=oracle.failing_mask,
        on_improve=on_improve,
    )


def truncate(problem: Problem, edit: Edit, shape: GraphShape, width: int) -> Edit:
    """Keep the shortest prefix of the graph that still fails (a boundary search, `width` points a round)."""
    n = len([x for x in shape.body if x in edit.computed])
    idx = find_boundary(
        lambda i: problem.test(shape.truncate_after(edit, i)),
        lo=-1,
        hi=n - 1,
        fails_many=lambda points: problem.failing_mask([shape.truncate_after(edit, i) for i in points]),
        width=width,
    )
    if idx is None or idx >= n - 1:
        return edit
    cut = shape.truncate_after(edit, idx)
    return cut if cut is not None and problem.test(cut) else edit


def drop_outputs(problem: Problem, edit: Edit, shape: GraphShape) -> Edit:
    """Keep a 1-minimal set of the graph's outputs."""
    if len(edit.outputs) < 2:
        return edit
    keep = ddmin(
        list(edit.outputs),
        lambda outs: problem.test(shape.with_outputs(edit, outs)),
        first_failing_of=lambda cands: problem.first_failing([shape.with_outputs(edit, c) for c in cands]),
    )
    return shape.with_outputs(edit, keep) or edit  # (ddmin keeps one output at least)


def nodes_to_inputs(problem: Problem, edit: Edit, shape: GraphShape, op: str | None = None) -> Edit:
    """Cut computed nodes into inputs (fed their eager values), keeping a 1-minimal set computed. With `op` (the
    operator whose lowering the bisect found breaking), the nodes calling it are cut last: every other node is
    reduced first with them computed, as a cut that feeds the failing op its value in place of computing it
    passes or fails another way (issue #32), then those nodes themselves."""
    cuttable = shape.cuttable(edit)
    if not cuttable:
        return edit
    last = [n for n in shape.nodes_of_op(edit, op) if n in cuttable] if op else []
    first = [n for n in cuttable if n not in last]
    if not (last and first):
        return _keep_1_minimal(problem, edit, shape, cuttable, [])
    edit = _keep_1_minimal(problem, edit, shape, first, last)
    cuttable = shape.cuttable(edit)
    return _keep_1_minimal(
        problem, edit, shape, [n for n in cuttable if n in last], [n for n in cuttable if n not in last]
    )


def _keep_1_minimal(problem: Problem, edit: Edit, shape: GraphShape, among: list, kept: list) -> Edit:
    """ddmin over the cuttable nodes `among`, each candidate keeping `kept` computed too (and none of `among`, when
    it is one node: ddmin keeps at least one). A lone node is cut alone only beside others kept, or when it writes
    in place: cut, the write drops out of the graph (#198095's add_), where a lone op that computes is the graph."""
    if not among or (len(among) < 2 and not kept and not shape.by_name[among[0]].mutates):
        return edit
    if len(among) == 1:
        alone = shape.keep_computed(edit, kept)
        return alone if problem.test(alone) else edit
    keep = ddmin(
        among,
        lambda k: problem.test(shape.keep_computed(edit, list(k) + kept)),
        first_failing_of=lambda cands: problem.first_failing(
            [shape.keep_computed(edit, list(c) + kept) for c in cands]
        ),
    )
    return shape.keep_computed(edit, list(keep) + kept)


def drop_calls(problem: Problem, edit: Edit, shape: GraphShape) -> Edit:
    """Drop the calls made for their effect alone, all at once, else keeping a 1-minimal set (#197086's jvp graph
    kept _maybe_load_decompositions and both forward-grad switches: nothing cut them)."""
    calls = shape.effect_calls(edit)
    if not calls:
        return edit
    if problem.test(shape.without(edit, calls)):
        return shape.without(edit, calls)
    if len(calls) < 2:
        return edit

    def keeping(kept) -> Edit:
        return shape.without(edit, [c for c in calls if c not in kept])

    keep = ddmin(
        calls,
        lambda k: problem.test(keeping(k)),
        first_failing_of=lambda cands: problem.first_failing([keeping(c) for c in cands]),
    )
    return keeping(keep)


def graph_passes(shape: GraphShape, width: int, op: str | None = None) -> list:
    """The passes, in the order each round runs them."""
    return [
        Pass("truncate", lambda p, e: truncate(p, e, shape, width)),
        Pass("drop_outputs", lambda p, e: drop_outputs(p, e, shape)),
        Pass("nodes_to_inputs", lambda p, e: nodes_to_inputs(p, e, shape, op)),
        Pass("drop_calls", lambda p, e: drop_calls(p, e, shape)),
    ]


def reduce_graph(problem: Problem, shape: GraphShape, width: int, op: str | None = None) -> Edit:
    """Run the graph passes from the problem's best edit to a fixed point; `op`: see nodes_to_inputs."""
    return run_passes(problem, graph_passes(shape, width, op))
