"""Dynamo-stage failures have no graph to cut: reduce the user's script itself, keeping the signature."""
from __future__ import annotations

import ast
import dataclasses
import os
import time

from reprokit.data.records import Signature, TrialSpec, Verdict, text_hash
from reprokit.data.rundir import RunDir
from reprokit.search import Pass, Problem, ddmin, run_passes
from reprokit.source.edits import inline_candidates, simplify_candidates, statements, unbound_names, without

# Inlining a helper may make the script longer before deleting its now-unused def makes it shorter:
# candidates up to this many characters longer than the best are still tried.
INLINE_SLACK = 200


def source_problem(run_dir: RunDir, v: Verdict, runner, start: str, stage: str = "eager", same=None,
                   share: "Share | None" = None) -> Problem:
    """The reduction problem over texts of the script: each is run as a trial under `stage` ("eager" for a
    Dynamo-stage failure, "user" for the script's own compile, an export stage); every improvement is repro.py.
    same(outcome), when given, must hold too (an export failure's guard). A batch of candidates runs side by side,
    each from a file of its own (candidates/<hash>.py)."""
    target = Signature.from_dict(v.signature)
    opts = run_dir.read_json("run.json")["options"]
    share = share or Share()

    # A candidate reading a name it no longer binds dies of NameError: not this failure, unless it is one.
    name_check = target.exc_type != "NameError"
    # A candidate may run at most a few times as long as the script did (the first text asked is the script
    # itself): a cut that loops forever is refused in seconds, not at the run's limit (issue #32: three endless
    # candidates of a 5-second script held 450 s).
    limit: list = []
    # The passes' share of time (reduction_share), from the end of the script's first run: once spent, every
    # candidate is refused without a trial and the passes end with the smallest so far.
    deadline: list = []

    def out_of_time() -> bool:
        if deadline and time.monotonic() > deadline[0]:
            share.ran_out = True
        return share.ran_out

    def spec_of(source: str) -> TrialSpec:
        digest = text_hash(source)
        name = os.path.join("candidates", f"{digest[:16]}.py")
        run_dir.write_text(name, source)
        return TrialSpec(mode="script", stage=stage, script=run_dir.file(name), argv=tuple(v.argv), cwd=opts["cwd"],
                         label=f"source-{len(source.splitlines())}l", path_dirs=(os.path.dirname(v.script),),
                         script_hash=digest)

    def runnable(source: str | None) -> bool:
        return source is not None and not (name_check and unbound_names(source))

    def matches(compiled) -> bool:
        return compiled is not None and target.matches(compiled.signature) and (same is None or same(compiled))

    def passes_plain(spec: TrialSpec) -> bool:
        # Failing the same way is not enough: a candidate that also fails with compile off has lost the bug (the
        # user's assert kept, the compiled call cut; or the script broken in a way that happens to match). Asked
        # only now: most candidates fail otherwise, and their no-compile trial would be wasted.
        plain = runner(dataclasses.replace(spec, stage="none", label=spec.label + "-no-compile"), limit=limit[0])
        return plain is not None and plain.kind == "pass"

    def fails_same(source: str | None) -> bool:
        if not runnable(source) or out_of_time():
            return False
        spec = spec_of(source)
        compiled = runner(spec, limit=limit[0] if limit else None)
        if not limit and compiled is not None:
            limit.append(candidate_limit(compiled.seconds))
            share.given = share.of_script_seconds(compiled.seconds)
            deadline.append(time.monotonic() + share.given)
        return matches(compiled) and passes_plain(spec)

    def first_failing(candidates) -> int | None:
        """The first candidate, in order, that fails the same way: the candidates run side by side, and none
        after a match starts (the script's first run, which sets the limit, goes alone through fails_same)."""
        if not limit:
            return next((i for i, c in enumerate(candidates) if fails_same(c)), None)
        if out_of_time():
            return None
        asked = [(i, spec_of(c)) for i, c in enumerate(candidates) if runnable(c)]
        while asked and not out_of_time():
            outcomes = runner.map([spec for _, spec in asked], stop=lambda j, o: matches(o), limit=limit[0])
            hit = next((j for j, o in enumerate(outcomes) if matches(o)), None)
            if hit is None:
                return None
            if passes_plain(asked[hit][1]):
                return asked[hit][0]
            asked = asked[hit + 1:]
        return None

    return Problem(start, fails_same, size=len, first_failing=first_failing,
                   on_improve=lambda source: run_dir.write_text("repro.py", source))


class Share:
    """The source passes' share of time, given once the script's first run says how long it takes; ran_out once it
    was spent with candidates still to ask."""

    def __init__(self, of_script_seconds=None):
        self.of_script_seconds = of_script_seconds or (lambda seconds: reduction_share(seconds))
        self.given: float | None = None
        self.ran_out = False


def delete_statements(problem: Problem, source: str) -> str:
    """ddmin over the statements of the AST, outermost first (an emptied block gets `pass`)."""
    paths = statements(ast.parse(source))

    def text(kept):
        return without(source, set(paths) - set(kept))

    keep = ddmin(paths, lambda kept: problem.test(text(kept)),
                 first_failing_of=lambda parts: problem.first_failing([text(k) for k in parts]))
    return without(source, set(paths) - set(keep)) or source


def _each_that_fails(problem: Problem, source: str, propose, keep) -> str:
    """Take the first proposal that fails the same way, again from the new source, until none does. After a hit
    at position i the next sweep starts at i (and wraps round): the proposals before i were just refused, and
    asking them again first made the sweeps quadratic (segformer #188422: 175 trials at one size)."""
    at = 0
    while True:
        candidates = [c for c in propose(source) if keep(c)]
        if not candidates:
            return source
        at = min(at, len(candidates))
        order = candidates[at:] + candidates[:at]
        hit = problem.first_failing(order)
        if hit is None:
            return source
        source = order[hit]
        at = (at + hit) % len(candidates)


def inline_helpers(problem: Problem, source: str) -> str:
    """Replace a one-line helper's calls by its return expression, while the script fails the same way."""
    return _each_that_fails(problem, source, inline_candidates, lambda c: len(c) < len(problem.best) + INLINE_SLACK)


def simplify_expressions(problem: Problem, source: str) -> str:
    """Replace an expression by one of its sub-expressions, while the script fails the same way."""
    return _each_that_fails(problem, source, simplify_candidates, lambda c: len(c) < len(problem.best))


SOURCE_PASSES = [Pass("delete_statements", delete_statements), Pass("inline_helpers", inline_helpers),
                 Pass("simplify_expressions", simplify_expressions)]


def reduction_share(script_seconds: float) -> float:
    """Seconds the source passes may spend: four minutes, or forty runs of the script (issue #32: a 59-line script
    within 5 minutes on 2 cores). When they run out, the smallest candidate so far is verified as repro.py."""
    return max(240.0, 40 * script_seconds)


def candidate_limit(script_seconds: float) -> float:
    """Seconds a reduced script may run: three times the script's own run, and at least 30."""
    return max(30.0, 3 * script_seconds)


def minify_source(run_dir: RunDir, v: Verdict, runner, emit, started: float, before: int,
                  stage: str = "eager", same=None) -> Verdict:
    """Reduce the script with the source passes while it fails the same way, then verify repro.py twice; fills in
    the repro fields of `v`, minify's working verdict."""
    with open(v.script) as f:
        original = f.read()
    v.repro_kind = "source"
    share = Share()
    problem = source_problem(run_dir, v, runner, ast.unparse(ast.parse(original)) + "\n", stage, same, share)
    emit("minify_start", graph="source", nodes=len(original.strip().splitlines()))
    if not problem.test(problem.best):
        v.repro_verified = False
        v.message = "the script, re-printed from its AST, no longer fails the same way: source not reduced"
        return v
    result = run_passes(problem, SOURCE_PASSES)
    run_dir.write_text("repro.py", result)
    _verify(run_dir, v, runner, result, same)
    v.nodes = {"original": len(original.strip().splitlines()), "minified": len(result.strip().splitlines()),
               "unit": "lines"}
    v.minify_trials = runner.executed - before
    v.minify_seconds = round(time.monotonic() - started, 2)
    if share.ran_out:
        said = (f"the source reduction stopped at its share of time ({share.given:.0f} s): "
                "repro.py is the smallest script so far that fails the same way, not a minimal one")
        emit("note", text=said)
        v.message = "; ".join(x for x in (v.message, said) if x)
    emit("minified", before=v.nodes["original"], after=v.nodes["minified"], unit="lines", trials=v.minify_trials,
         seconds=v.minify_seconds, verified=v.repro_verified)
    return v


def _verify(run_dir: RunDir, v: Verdict, runner, result: str, same=None) -> None:
    """Run repro.py twice in fresh interpreters: verified when both fail the same way."""
    target = Signature.from_dict(v.signature)
    opts = run_dir.read_json("run.json")["options"]
    specs = [TrialSpec(mode="script", stage="user", script=run_dir.file("repro.py"), cwd=opts["cwd"],
                       argv=tuple(v.argv), attempt=i, label=f"verify-repro-{i}",
                       path_dirs=(os.path.dirname(v.script),), script_hash=text_hash(result),
                       fresh_interpreter=True) for i in range(2)]
    *checks, plain = runner.map(specs + [dataclasses.replace(specs[0], stage="none", label="verify-repro-no-compile")])
    v.repro = run_dir.file("repro.py")
    v.repro_verified = all(c is not None and target.matches(c.signature) and (same is None or same(c))
                           for c in checks) and (
        plain is not None and plain.kind == "pass")
    v.repro_signature = checks[0].signature.to_dict() if checks[0] else None
