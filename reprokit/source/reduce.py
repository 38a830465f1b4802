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


def source_problem(run_dir: RunDir, v: Verdict, runner, start: str, stage: str = "eager", same=None) -> Problem:
    """The reduction problem over texts of the script: each is run as a trial under `stage` ("eager" for a
    Dynamo-stage failure, "user" for the script's own compile, an export stage); every improvement is repro.py.
    same(outcome), when given, must hold too (an export failure's guard)."""
    target = Signature.from_dict(v.signature)
    opts = run_dir.read_json("run.json")["options"]
    candidate_path = run_dir.file("source_candidate.py")

    # A candidate reading a name it no longer binds dies of NameError: not this failure, unless it is one.
    name_check = target.exc_type != "NameError"
    # A candidate may run at most a few times as long as the script did (the first text asked is the script
    # itself): a cut that loops forever is refused in seconds, not at the run's limit (issue #32: three endless
    # candidates of a 5-second script held 450 s).
    limit: list = []

    def fails_same(source: str | None) -> bool:
        if source is None or (name_check and unbound_names(source)):
            return False
        run_dir.write_text("source_candidate.py", source)
        spec = TrialSpec(mode="script", stage=stage, script=candidate_path, argv=tuple(v.argv), cwd=opts["cwd"],
                         label=f"source-{len(source.splitlines())}l", path_dirs=(os.path.dirname(v.script),),
                         script_hash=text_hash(source))
        compiled = runner(spec, limit=limit[0] if limit else None)
        if not limit and compiled is not None:
            limit.append(candidate_limit(compiled.seconds))
        if compiled is None or not target.matches(compiled.signature) or (same is not None and not same(compiled)):
            return False
        # Failing the same way is not enough: a candidate that also fails with compile off has lost the bug (the
        # user's assert kept, the compiled call cut; or the script broken in a way that happens to match). Asked
        # only now: most candidates fail otherwise, and their no-compile trial would be wasted.
        plain = runner(dataclasses.replace(spec, stage="none", label=spec.label + "-no-compile"), limit=limit[0])
        return plain is not None and plain.kind == "pass"

    return Problem(start, fails_same, size=len, on_improve=lambda source: run_dir.write_text("repro.py", source))


def delete_statements(problem: Problem, source: str) -> str:
    """ddmin over the statements of the AST, outermost first (an emptied block gets `pass`)."""
    paths = statements(ast.parse(source))
    keep = ddmin(paths, lambda kept: problem.test(without(source, set(paths) - set(kept))))
    return without(source, set(paths) - set(keep)) or source


def _first_that_fails(problem: Problem, candidates) -> str | None:
    return next((c for c in candidates if len(c) < len(problem.best) + INLINE_SLACK and problem.test(c)), None)


def inline_helpers(problem: Problem, source: str) -> str:
    """Replace a one-line helper's calls by its return expression, while the script fails the same way."""
    while (found := _first_that_fails(problem, inline_candidates(source))) is not None:
        source = found
    return source


def simplify_expressions(problem: Problem, source: str) -> str:
    """Replace an expression by one of its sub-expressions, while the script fails the same way."""
    while (found := _first_that_fails(problem, [c for c in simplify_candidates(source)
                                                if len(c) < len(source)])) is not None:
        source = found
    return source


SOURCE_PASSES = [Pass("delete_statements", delete_statements), Pass("inline_helpers", inline_helpers),
                 Pass("simplify_expressions", simplify_expressions)]


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
    problem = source_problem(run_dir, v, runner, ast.unparse(ast.parse(original)) + "\n", stage, same)
    emit("minify_start", graph="source", nodes=len(original.splitlines()))
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
    emit("minified", before=v.nodes["original"], after=v.nodes["minified"], trials=v.minify_trials,
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
