"""The minify use case: capture the failing graph, cut it while it fails the same way, write repro.py."""
from __future__ import annotations

import os
import shutil
import time
from typing import Callable, Optional

from reprokit.errors import ReprokitError
from reprokit.fx.graphcase import Edit, GraphShape
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.records import Signature, TrialSpec, Verdict, file_hash
from reprokit.report.render import render_repro
from reprokit.data.rundir import RunDir, read_json
from reprokit.data.trial_files import trial_record
from reprokit.trial.runner import Runner
from reprokit.search import ddmin, find_boundary, run_to_fixpoint

Emit = Callable[..., None]


def _noop(*_a, **_k):
    pass


def make_runner(run: RunDir, emit: Emit, jobs: int = 1) -> Runner:
    opts = run.read_json("run.json")["options"]
    return Runner(run, timeout=opts.get("timeout") or 600.0, jobs=jobs,
                  on_trial=lambda s, o, c: emit("trial", spec=s, outcome=o, cached=c))


class GraphMinifier:
    """Asks 'does this smaller graph still fail the same way?' until nothing smaller does."""

    def __init__(self, run: RunDir, runner: Runner, shape: GraphShape, case: str, stage: str, target: Signature,
                 check_accuracy: bool, run_backward: bool, emit: Emit):
        self.run, self.runner, self.shape, self.case = run, runner, shape, case
        self.stage, self.target = stage, target
        self.check_accuracy, self.run_backward = check_accuracy, run_backward
        self.emit = emit
        self.best = shape.original()
        self.refused: list = []  # smaller graphs that failed, but differently (slippage the search refused)

    def spec(self, edit: Optional[Edit], label: str) -> TrialSpec:
        return TrialSpec(mode="graph", stage=self.stage, case=self.case,
                         edit=None if edit is None else edit.to_dict(), check_accuracy=self.check_accuracy,
                         run_backward=self.run_backward, label=label)

    def fails(self, edit: Optional[Edit]) -> bool:
        return self.first_failing([edit]) == 0

    def first_failing(self, edits: list) -> Optional[int]:
        """Index of the first edit that fails the same way; up to `jobs` of them are tried at once."""
        runnable = [(i, e) for i, e in enumerate(edits) if e is not None and e.computed]
        specs = [self.spec(e, f"minify-{self.shape.size(e)}n") for _, e in runnable]
        outcomes = self.runner.map(specs, stop=lambda _, o: self.target.matches(o.signature))
        for (i, edit), outcome in zip(runnable, outcomes):
            if outcome is not None and self.judge(edit, outcome):
                return i
        return None

    def failing_mask(self, edits: list) -> list:
        """For a monotone search: all of them asked at once, each answer kept."""
        runnable = [e for e in edits if e is not None and e.computed]
        outcomes = iter(self.runner.map([self.spec(e, f"minify-{self.shape.size(e)}n") for e in runnable]))
        return [bool(e is not None and e.computed and self.judge(e, next(outcomes))) for e in edits]

    def judge(self, edit: Edit, outcome) -> bool:
        size = self.shape.size(edit)
        if self.target.matches(outcome.signature):
            if size < self.shape.size(self.best):
                self.best = edit
                # Written at every improvement: Ctrl-C or a crash keeps the smallest failing graph.
                self.run.write_json("minify.json", {"case": self.case, "best": edit.to_dict(), "nodes": size})
                self.emit("minify_step", what="smaller graph fails the same way", nodes=size)
            return True
        if outcome.failed and len(self.refused) < 20:
            self.refused.append({"nodes": size, "signature": outcome.signature.to_dict()})
        return False

    # -- passes, each a verb --------------------------------------------------------------------
    def truncate(self, edit: Edit) -> Edit:
        n = len([x for x in self.shape.body if x in edit.computed])
        idx = find_boundary(lambda i: self.fails(self.shape.truncate_after(edit, i)), lo=-1, hi=n - 1,
                            fails_many=lambda points: self.failing_mask([self.shape.truncate_after(edit, i)
                                                                         for i in points]),
                            width=self.runner.jobs)
        if idx is None or idx >= n - 1:
            return edit
        cut = self.shape.truncate_after(edit, idx)
        return cut if cut is not None and self.fails(cut) else edit

    def drop_outputs(self, edit: Edit) -> Edit:
        if len(edit.outputs) < 2:
            return edit
        keep = ddmin(list(edit.outputs), lambda outs: self.fails(self.shape.with_outputs(edit, outs)),
                     first_failing_of=lambda cands: self.first_failing([self.shape.with_outputs(edit, c)
                                                                         for c in cands]))
        return self.shape.with_outputs(edit, keep)

    def nodes_to_inputs(self, edit: Edit) -> Edit:
        cuttable = self.shape.cuttable(edit)
        if len(cuttable) < 2:
            return edit
        keep = ddmin(cuttable, lambda k: self.fails(self.shape.keep_computed(edit, k)),
                     first_failing_of=lambda cands: self.first_failing([self.shape.keep_computed(edit, c)
                                                                         for c in cands]))
        return self.shape.keep_computed(edit, keep)

    def reduce(self) -> Edit:
        return run_to_fixpoint(self.best, [self.truncate, self.drop_outputs, self.nodes_to_inputs],
                               size=self.shape.size)


def minify_run(run: RunDir, runner: Optional[Runner] = None, emit: Emit = _noop, resume: bool = False) -> Verdict:
    """Minify the failing graph of a finished bisect run and write a verified repro.py into its folder."""
    v = Verdict.from_dict(run.read_json("verdict.json"))
    info = run.read_json("run.json")
    opts = info["options"]
    runner = runner or make_runner(run, emit)
    started, before = time.monotonic(), runner.executed
    if not v.failing_stage:
        raise ReprokitError(f"{run.path} has no failing stage to minify")
    if v.failing_stage == "eager":
        from reprokit.source.reduce import minify_source

        return minify_source(run, v, runner, emit, started, before)
    if v.graph is None:
        v.message = (v.message + " " if v.message else "") + "no single graph fails alone: nothing to minify"
        run.write_json("verdict.json", v.to_dict())
        return v
    stage = v.failing_stage if v.failing_stage in STAGE_TITLES else "user"
    original = Signature.from_dict(v.signature)
    accuracy = original.kind in ("accuracy", "exit") or original.exc_type == "AssertionError" or opts.get(
        "check_accuracy", False)
    found = find_failing_graph(runner, v, opts, info, stage, accuracy)
    if isinstance(found, str):
        return _give_up(run, v, found)
    case, meta, target, run_backward = found
    shape = GraphShape.from_meta(meta)
    emit("minify_start", graph=v.graph, nodes=meta["node_count"])
    notes = [meta.get("note")] if meta.get("note") else []
    if original.kind in ("exception", "crash") and not target.matches(original):
        notes.append(f"the graph alone fails as {target.short()!r}, not exactly as the script did")

    m = GraphMinifier(run, runner, shape, case, stage, target, accuracy, run_backward, emit)
    if resume and run.exists("minify.json"):
        saved = run.read_json("minify.json")
        if saved.get("case") == case:
            m.best = Edit.from_dict(saved["best"])
    try:
        best = m.reduce()
    except KeyboardInterrupt:
        best = m.best
        v.message = "minify interrupted; repro.py is the smallest failing graph found so far"
    v.nodes = {"original": meta["node_count"], "minified": shape.size(best)}
    write_verified_repro(run, runner, v, case, best, stage, target, accuracy, run_backward, info.get("command", ""))
    if m.refused:
        notes.append(f"{len(m.refused)} smaller graphs failed differently and were refused (see minify_refused.json)")
        run.write_json("minify_refused.json", m.refused)
    v.minify_trials = runner.executed - before
    v.minify_seconds = round(time.monotonic() - started, 2)
    if notes:
        v.message = "; ".join(x for x in [v.message] + notes if x)
    run.write_json("verdict.json", v.to_dict())
    emit("minified", before=v.nodes["original"], after=v.nodes["minified"], trials=v.minify_trials,
         seconds=v.minify_seconds, verified=v.repro_verified)
    return v


def find_failing_graph(runner, v, opts, info, stage, accuracy):
    """(case folder, meta, graph-level signature, run_backward) of a captured graph that fails alone, or why not.

    Forward first. When only the backward fails, the backward graph AOT autograd hands inductor is captured
    and minified as a graph of its own; failing that, the Dynamo graph is run forward and backward.
    """
    base = dict(mode="script", script=v.script, argv=tuple(v.argv), cwd=opts["cwd"], script_hash=file_hash(v.script))
    budget = info.get("max_input_bytes", 64 << 20)

    def capture(backward: bool, label: str):
        out = runner(TrialSpec(stage=stage, only_graph=v.graph if v.graph_count > 1 else None,
                               other_stage=v.last_passing_stage or "eager", capture=v.graph,
                               check_accuracy=opts.get("check_accuracy", False), max_input_bytes=budget,
                               capture_backward=backward, label=label, **base))
        case = os.path.join(out.trial_dir, "case")
        return out, case if os.path.exists(os.path.join(case, "meta.json")) else None

    def alone(case, backward, label):
        return runner(TrialSpec(mode="graph", stage=stage, case=case, check_accuracy=accuracy, run_backward=backward,
                                label=label))

    cap, case = capture(False, f"capture-graph-{v.graph}")
    if case is None:
        return f"capturing graph {v.graph} failed ({cap.signature.short()})"
    out = alone(case, False, "graph-alone")
    if out.failed:
        return case, read_json(os.path.join(case, "meta.json")), out.signature, False
    state = trial_record(cap.trial_dir)
    if v.graph not in (state.get("backward_graphs") or []):
        return f"graph {v.graph} passes when run alone through {stage}; the failure needs the rest of the script"
    if stage == "inductor":
        bw_cap, bw_case = capture(True, f"capture-backward-{v.graph}")
        if bw_case is not None:
            out = alone(bw_case, False, "backward-graph-alone")
            if out.failed:
                return bw_case, read_json(os.path.join(bw_case, "meta.json")), out.signature, False
    out = alone(case, True, "graph-alone-bw")
    if out.failed:
        return case, read_json(os.path.join(case, "meta.json")), out.signature, True
    return f"graph {v.graph} passes alone, forward and backward, through {stage}"


def write_verified_repro(run, runner, v, case, edit, stage, target, accuracy, run_backward, command) -> None:
    """Render repro.py, run it twice in fresh processes, and record whether it fails the same way."""
    parts_out = runner(TrialSpec(mode="repro", stage=stage, case=case, edit=edit.to_dict(), label="repro-parts"))
    parts_path = os.path.join(parts_out.trial_dir, "repro_parts.json")
    if not os.path.exists(parts_path):
        v.repro_verified = False
        v.message = f"could not write repro.py: {parts_out.signature.short()}"
        return
    parts = read_json(parts_path)
    v.nodes = {"original": v.nodes["original"], "minified": parts["nodes"]}
    # Random inputs make the shortest repro; real values only where they matter (or random ones fail to repro).
    attempts = (True,) if accuracy or parts["attributes"] else (False, True)
    for use_saved in attempts:
        text = render_repro(parts, v, stage=stage, target=target, accuracy=accuracy, backward=run_backward,
                            use_saved=use_saved, command=command, original_nodes=v.nodes["original"])
        run.write_text("repro.py", text)
        if use_saved:
            shutil.copyfile(os.path.join(parts_out.trial_dir, "repro_inputs.pt"), run.file("repro_inputs.pt"))
        elif os.path.exists(run.file("repro_inputs.pt")):
            os.unlink(run.file("repro_inputs.pt"))
        checks = runner.map([TrialSpec(mode="script", stage="user", script=run.file("repro.py"), cwd=run.path,
                                       check_accuracy=accuracy, attempt=i, label=f"verify-repro-{i}",
                                       script_hash=file_hash(run.file("repro.py")), fresh_interpreter=True)
                          for i in range(2)])
        same = [c is not None and target.matches(c.signature) for c in checks]
        v.repro = run.file("repro.py")
        v.repro_verified = all(same)
        v.repro_signature = checks[0].signature.to_dict() if checks[0] else None
        if v.repro_verified:
            return


def _give_up(run: RunDir, v: Verdict, why: str) -> Verdict:
    v.repro_verified = False
    v.message = (v.message + "; " if v.message else "") + why
    run.write_json("verdict.json", v.to_dict())
    return v
