"""Dynamo-stage failures have no graph to cut: reduce the user's script itself, keeping the signature."""

from __future__ import annotations

import ast
import dataclasses
import os
from typing import TypeGuard

from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import TrialSpec, text_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.minify.walk_back import walk_back_most, walked_back_note
from reprokit.search import Pass, Plan, Problem, Share, probdd, run_passes, verified_back, walk_back_order
from reprokit.source.edits import (
    checks,
    compile_entries,
    graph_breaks,
    inline_candidates,
    seeds,
    simplify_candidates,
    statements,
    unbound_names,
    without,
)
from reprokit.source.passes import person_passes, source_size
from reprokit.source.tidy import tidy_candidates
from reprokit.source.trim import unused_attribute_candidates
from reprokit.source.verify import Checks, code_lines, finished

# Inlining a helper may make the script longer before deleting its now-unused def makes it shorter:
# candidates up to this many characters longer than the best are still tried.
INLINE_SLACK = 200


def source_problem(
    run_dir: RunDir,
    v: Isolation,
    runner,
    start: str,
    stage: str = "eager",
    same=None,
    share: Share | None = None,
    *,
    cwd: str,
) -> Problem:
    """The reduction problem over texts of the script: each is run as a trial under `stage` ("eager" for a
    Dynamo-stage failure, "user" for the script's own compile, an export stage), in `cwd` (the folder the bisect
    ran the script in); every improvement is repro.py. same(outcome), when given, must hold too (an export
    failure's guard). A batch of candidates runs side by side, each from a file of its own (candidates/<hash>.py)."""
    oracle = SourceOracle(run_dir, v, runner, stage, same, share or source_share(runner.policy.plan), cwd)
    return Problem(
        start,
        oracle.fails_same,
        size=source_size,
        first_failing=oracle.first_failing,
        on_improve=lambda source: run_dir.write_text("repro.py", source),
        width=getattr(runner, "jobs", 1),
    )


class SourceOracle:
    """Runs texts of the script as trials: one fails the same way when it matches the target (and `same`), and
    passes with compile off. The script's first run sets a candidate's time limit and starts the share of time:
    once the share is spent, every candidate is refused without a trial."""

    def __init__(self, run_dir: RunDir, v: Isolation, runner, stage: str, same, share: Share, cwd: str):
        self.run_dir, self.v, self.runner, self.stage, self.same, self.share = run_dir, v, runner, stage, same, share
        self.target = Signature.from_dict(v.signature)
        self.cwd = cwd
        # A candidate reading a name it no longer binds dies of NameError: not this failure, unless it is one.
        self.name_check = self.target.exc_type != "NameError"
        # A candidate may run at most a few times as long as the script did (the first text asked is the script
        # itself): a cut that loops forever is refused in seconds, not at the run's limit (issue #32: three
        # endless candidates of a 5-second script held 450 s).
        self.limit: float | None = None
        self.seeded: bool | None = None  # whether the script seeds a generator: then each candidate must too
        self.compiles: bool | None = None  # whether the script names torch.compile or export: each candidate must
        self.kept: tuple | None = None  # the script's checks and graph breaks: a candidate changes neither

    def spec_of(self, source: str) -> TrialSpec:
        digest = text_hash(source)
        name = os.path.join("candidates", f"{digest[:16]}.py")
        self.run_dir.write_text(name, source)
        return TrialSpec(
            mode="script",
            stage=self.stage,
            script=self.run_dir.file(name),
            argv=tuple(self.v.argv),
            cwd=self.cwd,
            label=f"source-{len(source.splitlines())}l",
            path_dirs=(os.path.dirname(self.v.script),),
            script_hash=digest,
        )

    def runnable(self, source: str | None) -> TypeGuard[str]:
        # A candidate without the script's seeding call draws new inputs each run: it may fail in its trial and
        # pass for the user (#194347's 19-line repro failed 2 of 2 checks, then passed 6 of 6 plain runs).
        return (
            source is not None
            and not (self.name_check and unbound_names(source))
            and not (self.seeded and not seeds(source))
            and not (self.compiles and not compile_entries(source))
            and self.keeps_checks(source)
        )

    def keeps_checks(self, source: str) -> bool:
        # A candidate that changed what a check compares, or where Dynamo splits the script, may fail the same way
        # of another bug (#192872's repro lost its graph_break() and its `== ref_n`, and showed #151251).
        if self.kept is None:
            return True
        mine = checks(source)
        return all(mine[c] <= self.kept[0][c] for c in mine) and graph_breaks(source) == self.kept[1]

    def matches(self, compiled) -> bool:
        return (
            compiled is not None
            and self.target.matches(compiled.signature)
            and (self.same is None or self.same(compiled))
        )

    def passes_plain(self, spec: TrialSpec) -> bool:
        # Failing the same way is not enough: a candidate that also fails with compile off has lost the bug (the
        # user's assert kept, the compiled call cut; or the script broken in a way that happens to match). Asked
        # only now: most candidates fail otherwise, and their no-compile trial would be wasted.
        plain = self.runner(dataclasses.replace(spec, stage="none", label=spec.label + "-no-compile"), limit=self.limit)
        return plain is not None and plain.kind == OutcomeKind.PASS

    def fails_same(self, source: str | None) -> bool:
        if not self.runnable(source) or self.share.spent():
            return False
        if self.seeded is None:  # the first text asked is the script itself
            self.seeded = seeds(source) > 0
            self.compiles = compile_entries(source) > 0
            self.kept = (checks(source), graph_breaks(source))
        spec = self.spec_of(source)
        compiled = self.runner(spec, limit=self.limit)
        if self.limit is None and compiled is not None:
            self.limit = candidate_limit(compiled.seconds)
            self.share.start(compiled.seconds)
        return self.matches(compiled) and self.passes_plain(spec)

    def first_failing(self, candidates) -> int | None:
        """The first candidate, in order, that fails the same way: the candidates run side by side, and none
        after a match starts (the script's first run, which sets the limit, goes alone through fails_same).
        A candidate's file is written only when its batch is asked."""
        if self.limit is None:
            return next((i for i, c in enumerate(candidates) if self.fails_same(c)), None)
        asked = [(i, c) for i, c in enumerate(candidates) if self.runnable(c)]
        while asked and not self.share.spent():
            specs = [self.spec_of(c) for _, c in asked]
            # no candidate of the batch starts once the share is spent: run out, its last batch took #188422's
            # 60 s share 32 s over (2 loaded cores)
            outcomes = self.runner.map(specs, stop=lambda j, o: self.matches(o) or self.share.spent(), limit=self.limit)
            hit = next((j for j, o in enumerate(outcomes) if self.matches(o)), None)
            if hit is None:
                return None
            if self.passes_plain(specs[hit]):
                return asked[hit][0]
            asked = asked[hit + 1 :]
        return None


def source_share(plan: Plan | None = None) -> Share:
    """The source passes' share of time, given once the script's first run says how long it takes; at most what the
    run's time plan has left then (minify/plan.py), when it keeps to one."""
    return Share(lambda seconds: reduction_share(seconds), plan=plan)  # looked up per call: a test may patch it


def delete_statements(problem: Problem, source: str) -> str:
    """Probabilistic delta debugging over the statements of the AST, outermost first (an emptied block gets
    `pass`): the statements each refusal shows likely needed are kept out of the next questions, so it reaches
    ddmin's size in fewer trials (search/probdd.py); `width` removals side by side."""
    paths = statements(ast.parse(source))

    def text(kept):
        return without(source, set(paths) - set(kept))

    keep = probdd(
        paths,
        lambda kept: problem.test(text(kept)),
        first_failing_of=lambda parts: problem.first_failing([text(k) for k in parts]),
        width=problem.width,
    )
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
        hit = problem.edits.first_failing(problem, source, order)  # an edit refused before is not asked again
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


def tidy(problem: Problem, source: str) -> str:
    """Edits toward a script a person would write (source/tidy.py), all at once first, then each alone, while the
    script fails the same way."""
    return _each_that_fails(problem, source, tidy_candidates, lambda c: len(c) < len(problem.best))


def tidy_at_once(problem: Problem, source: str) -> str:
    """All the tidy edits at once, one trial: first in each round, since unwrapping the script's try/except and
    __main__ guard spares ddmin that work; each edit alone waits for the last pass, when fewer are left to ask."""
    return _first_only(problem, source, tidy_candidates)


def unread_attributes_at_once(problem: Problem, source: str) -> str:
    """Every attribute nothing reads gone at once, one trial, before ddmin: a submodule made and never called costs
    a slow script (#188422: 7 s a run) a trial each in ddmin's halves; each alone waits for the person passes."""
    return _first_only(problem, source, unused_attribute_candidates)


def _first_only(problem: Problem, source: str, propose) -> str:
    """The first proposal alone (the all-at-once edit each proposer puts first), while it fails the same way."""
    return _each_that_fails(problem, source, lambda s: propose(s)[:1], lambda c: len(c) < len(problem.best))


SOURCE_PASSES = [
    Pass("tidy_at_once", tidy_at_once),
    Pass("unread_attributes_at_once", unread_attributes_at_once),
    Pass("delete_statements", delete_statements),
    Pass("inline_helpers", inline_helpers, detour=True),
    Pass("simplify_expressions", simplify_expressions),
    *person_passes(_each_that_fails),
    Pass("tidy", tidy),
]


def reduction_share(script_seconds: float) -> float:
    """Seconds the source passes may spend: four minutes, or forty runs of the script (issue #32: a 59-line script
    within 5 minutes on 2 cores). When they run out, the smallest candidate so far is verified as repro.py."""
    return max(240.0, 40 * script_seconds)


def candidate_limit(script_seconds: float) -> float:
    """Seconds a reduced script may run: three times the script's own run, and at least 30."""
    return max(30.0, 3 * script_seconds)


def minify_source(
    run_dir: RunDir,
    isolation: Isolation,
    runner,
    emit,
    started: float,
    before: int,
    stage: str = "eager",
    same=None,
    prior: Repro | None = None,
    *,
    facts: RunFacts,
) -> Repro:
    """Reduce the script with the source passes while it fails the same way, then verify repro.py twice: the
    source repro, from `prior` (what minify wrote before it, and the verdict's message so far). facts.cwd: the
    folder the bisect ran the script in, where every candidate and repro.py run."""
    with open(isolation.script) as f:
        original = f.read()
    r = dataclasses.replace(prior or Repro(message=isolation.message), kind="source")
    share = source_share(runner.policy.plan)
    problem = source_problem(
        run_dir, isolation, runner, ast.unparse(ast.parse(original)) + "\n", stage, same, share, cwd=facts.cwd
    )
    emit(Event.MINIFY_START, graph="source", nodes=code_lines(original))
    check = Checks(run_dir, isolation, runner, same, emit, facts)
    unasked = runner.over_budget
    if not problem.test(problem.best):
        if runner.over_budget > unasked:  # not run at all: the run's --budget was spent before this phase
            # the script itself, re-printed, is checked as repro.py (a repro's checks run past the budget)
            r = check(r, problem.best)
            said = "the run's budget was spent before the source reduction's first trial: repro.py is the script itself, not reduced"
            return finished(r, [said], runner, original, problem.best, (before, started), emit)
        said = "the script, re-printed from its AST, no longer fails the same way: source not reduced"
        return dataclasses.replace(r, verified=False, message=said)
    run_passes(problem, SOURCE_PASSES)
    smallest = problem.best

    def verified(text: str) -> bool:
        nonlocal r
        r = check.polished(r, text)
        return bool(r.verified)

    most = walk_back_most(isolation.flaky)
    at = verified_back(problem.accepted, verified, most=most)
    # repro.py is the one verified, or else the last one checked (the smallest, unless the walk went back)
    result = problem.accepted[at if at is not None else walk_back_order(problem.accepted, most)[-1]]
    notes = []
    if at is not None and at != len(problem.accepted) - 1:
        notes.append(walked_back_note(f"a script of {code_lines(result)} lines", f"{code_lines(smallest)} lines"))
    if share.ran_out:
        notes.append(
            f"the source reduction stopped at its share of time ({share.given:.0f} s): "
            "repro.py is the smallest script so far that fails the same way, not a minimal one"
        )
    with open(run_dir.file("repro.py")) as f:  # polished, when that verified: its lines are the repro's
        return finished(r, notes, runner, original, f.read(), (before, started), emit)
