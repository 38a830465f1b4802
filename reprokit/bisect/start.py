"""The first round of a bisect run: the no-compile baseline, the original run(s), and whether there is
anything compiler-specific to isolate at all."""

from __future__ import annotations

import os
from dataclasses import replace

from reprokit.bisect.hang_limit import in_place_limit
from reprokit.bisect.ladder import dynamo_hang
from reprokit.bisect.plain import as_written_words, hidden_failure
from reprokit.bisect.session import TORCH_LOGS_ENV, Beside, Session
from reprokit.bisect.steady import count_same, more_runs, settle
from reprokit.bisect.warm import warm_rung
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation
from reprokit.data.ranks import needs_launcher
from reprokit.data.records import Outcome
from reprokit.data.warm_cache import describe as describe_warm
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.trial.ordered_map import ordered_map
from reprokit.trial.outcome import EXIT_HANG_NOTE, SCHEDULER_ENDED, scheduler_ended


def start_round(s: Session) -> tuple[Outcome, list]:
    """(baseline, originals): the script without compile, and as written (--repeat times), side by side."""
    o = s.opts
    # Torch's own logs ride along on the original: when it is the failing stage, no extra run is needed for them.
    # It saves the graph that raises, if one does: the later questions can be asked of that graph alone.
    first = [s.spec("none", "baseline-no-compile")] + [
        s.spec("user", "original", attempt=i, env=TORCH_LOGS_ENV, capture_failing=o.kind == "failure")
        for i in range(o.repeat)
    ]
    # The stages do not start beside them: when the original saves the graph that raised, the ladder asks that
    # graph alone (bisect/saved_graph.py), and a run of the script per stage is what a long job cannot afford.

    done: list = [None] * len(first)

    def run(spec):
        # Its limit is asked while it runs: the one the baseline's or the original's time sets meanwhile (stop)
        outcome = s.runner(spec, limit=lambda: s.runner.timeout)
        if spec.label == "original" and s.hang_limit is None:
            hung_in_place(s, outcome)
        if spec.label == "original" and o.timeout is None and outcome.kind != OutcomeKind.HANG and s.baseline is None:
            # The original answered first: a baseline still running (a hang at teardown) need not hold the run
            # for the default limit; the original, compile included, tells how long a run takes. The baseline's
            # own time, once it comes, sets the limit again (stop).
            s.use_policy(timeout=min(s.runner.timeout, limit_from_original(outcome.seconds)))
        return outcome

    def stop(i, outcome):
        done[i] = outcome
        if i == 0:
            s.baseline = outcome
        if i == 0 and o.timeout is None and outcome.kind != OutcomeKind.HANG:
            # Compiling costs far more than running; leave room for it. --timeout overrides. Trials already
            # running take the new limit too (run). A baseline cut at the limit says nothing of how long a run
            # takes: ten times the limit would let every trial beside it hang ten times as long.
            s.use_policy(timeout=trial_limit(outcome.seconds))
        # Dynamo hung before any graph reached a backend: every stage would hang the same way, a timeout each.
        # The ladder asks Dynamo's stage alone; the stages after it are not started.
        return i == o.repeat and any(x is not None and dynamo_hang(x) for x in done[1:])

    started = ordered_map(run, first, s.runner.jobs, stop, abort=s.runner.cancel)
    return started[0], started[1 : 1 + o.repeat]


def hung_in_place(s: Session, original: Outcome) -> None:
    """The original hung in a compile: later trials each end once a compile runs past the limit a capture would
    set (bisect/hang_limit), not at the whole timeout."""
    s.hang_limit = in_place_limit(original)
    if s.hang_limit is not None:
        s.use_policy(compile_limit=s.hang_limit["seconds"])
        s.emit(
            Event.NOTE, text=f"a hang: each compile may take {s.hang_limit['seconds']:.0f} s ({s.hang_limit['why']})"
        )


def trial_limit(baseline_seconds: float) -> float:
    """Seconds each trial may run, from the no-compile baseline's time."""
    return max(120.0, 10 * baseline_seconds)


def limit_from_original(original_seconds: float) -> float:
    """Seconds each trial may run while the baseline has not answered, from the original's time (which includes
    compiling, so ten times it leaves room for any stage)."""
    return max(60.0, 10 * original_seconds)


def reference_run(s: Session, baseline: Outcome, originals: list) -> Outcome:
    """The original run the search chases; raises when it gives nothing compiler-specific to isolate."""
    o = s.opts
    # With --repeat, a failing run is the reference even when the first run happened to pass.
    original = next((x for x in originals if x is not None and x.failed), originals[0])
    s.emit(
        Event.STAGE,
        stage="none",
        outcome=baseline,
        same=baseline.failed and original.failed and original.signature.matches(baseline.signature),
    )
    s.emit(Event.ORIGINAL, outcome=original)
    if o.ranks == 1 and any(needs_launcher(x.traceback or x.signature.message) for x in (baseline, original)):
        name = os.path.basename(o.script)
        raise ReprokitError(
            f"{name} initialises torch.distributed from the environment (env://) but no launcher "
            f"started it: run reprokit bisect --nproc-per-node N {name}"
        )
    ended = next((x for x in (original, baseline) if scheduler_ended(x)), None)
    if ended is not None:
        # Not "never calls torch.compile": the run gave no answer at all (issue 45).
        which = "as written" if ended is original else "without compile"
        jobs = ended.note.removeprefix(f"{SCHEDULER_ENDED}: ").removesuffix("; not the failure")
        raise ReprokitError(
            f"the cluster gave no answer for {os.path.basename(o.script)} run {which} ({jobs}; its trial folder: "
            f"{ended.trial_dir}): check the cluster, then run again"
        )
    if not original.compiled and original.failed and baseline.failed:
        # It died before it reached torch.compile (a missing module, a bad path): the run without compile fails
        # too, so there is nothing of the compiler's in it; "never calls torch.compile" would send the user to
        # the wrong line.
        raise NothingToIsolate(
            f"the script fails before it reaches torch.compile, and without compile too "
            f"({baseline.signature.short()[:200]}): nothing compiler-specific to isolate; "
            "fix that first"
        )
    if not original.compiled:
        raise ReprokitError(
            f"{os.path.basename(o.script)} never calls torch.compile (ran without it in "
            f"{baseline.seconds:.1f} s); reprokit bisects compiled code only"
        )
    if original.kind == OutcomeKind.SKIP and baseline.kind == OutcomeKind.PASS:
        return original  # out of memory compiled only: compiled needs more memory than eager, a finding
    if original.kind == OutcomeKind.SKIP:
        raise NothingToIsolate(
            f"the compiled run ran out of memory ({original.signature.exc_type}); that says "
            "nothing about the compiler: shrink the inputs or free the device, then run again"
        )
    if not original.failed:
        return passing_original(s, baseline, original, originals)
    return original


def passing_original(s: Session, baseline: Outcome, original: Outcome, originals: list) -> Outcome:
    """The run to chase when the instrumented original passed: a warm cache's failure, or the script's run as
    written; raises NothingToIsolate when neither fails."""
    o = s.opts
    if baseline.failed:
        raise NothingToIsolate(
            f"the script fails without compile ({baseline.signature.short()}) but passes "
            "compiled: nothing compiler-specific to isolate"
        )
    if o.kind == "slow":
        raise NothingToIsolate(
            f"compiled is not slower than eager by more than {o.slow_threshold:.0%} "
            f"({original.note or 'speed not measured'}): nothing to isolate"
        )
    s.warm_cache, warm = warm_rung(s)
    if warm is not None and flaky_not_cached(s, original, warm):
        s.warm_cache = None
        return warm
    if warm is not None and s.warm_cache is not None:  # (a warm run comes with its finding)
        s.emit(Event.NOTE, text=describe_warm(s.warm_cache))
        return warm
    # Reprokit's own instrumentation can hide a failure (issue 45): before "nothing to isolate", the script
    # runs exactly as the user runs it, nothing of reprokit's in the process (twice, when the first fails).
    s.plain = hidden_failure(s, original)
    if s.plain is not None:
        return s.plain
    hint = "" if o.check_accuracy else " (add --check-accuracy to compare every compiled graph with eager)"
    runs = sum(1 for x in originals if x is not None) + len(s.warm_cache_runs)
    plainly = as_written_clause(s.as_written)
    # A flaky failure can pass every run by chance (one failing half the time passes 3 in 8 times): said, with
    # what measures it.
    raise NothingToIsolate(
        f"the script passes compiled ({runs} of {runs} runs, on a cold and a warm inductor "
        f"cache{plainly}) and uncompiled: nothing to isolate; if it fails only now and then, "
        f"--repeat 10 measures how often{hint}"
    )


def as_written_clause(runs: list) -> str:
    """The runs as written in the "nothing to isolate" line: how many, and how they ended when not all passed."""
    if not runs:
        return ""
    times = {1: "once", 2: "twice"}.get(len(runs), f"{len(runs)} times")
    ended = "" if all(x.kind == OutcomeKind.PASS for x in runs) else f": {as_written_words(runs)}"
    return f", and {times} as written, outside reprokit{ended}"


RERUNS = 2  # runs of the script as written (caches off) that must all pass before a cache is blamed


def flaky_not_cached(s: Session, original: Outcome, failing: Outcome) -> bool:
    """Whether a failure the cache runs showed is the script's own chance, not the cache's: it fails again with the
    caches off, or the script's backend is not inductor (whose caches these are). Then every run so far counts
    towards its rate (s.reruns), and the bisect treats it as flaky."""
    not_inductor = original.user_backend not in (None, "inductor")
    again = [] if not_inductor else more_runs(s, "original-again", 100, RERUNS)
    back = count_same(failing.signature, again) > 0
    if not_inductor or back:
        s.reruns = tuple(o for _, o in s.warm_cache_runs) + tuple(again)
        why = (
            f"the script's backend ({original.user_backend}) uses no inductor cache"
            if not_inductor
            else "the failure came back with the caches off"
        )
        s.emit(Event.NOTE, text=f"{why}: a flaky script, not a cache bug")
    return not_inductor or back


def record_original(
    s: Session, found: Isolation, original: Outcome, originals: list, baseline: Outcome
) -> tuple[Isolation, int]:
    """Make the original's failure the target; the isolation with it noted, and how many originals failed that way.

    Raises when the script fails without compile too: that is not a compiler bug.
    """
    target = s.chase(original.signature)
    fails = sum(1 for x in originals if x is not None and target.matches(x.signature))
    found = replace(
        found,
        kind=original.kind,
        signature=original.signature.to_dict(),
        user_backend=original.user_backend,
        compile_args=original.compile_args,
        graph_count=original.graphs,
        repro_rate=fails / len(originals),
        repro_runs=len(originals),
    )
    if baseline.failed and not target.matches(baseline.signature):
        # Another failure than the original's (a hang at teardown where the original raised) is no proof that
        # the bug is not the compiler's: asked again, beside the questions that follow (a baseline that hangs
        # holds one slot for its limit, not the whole run twice over); the baseline that counts is the last one,
        # and Session.finish waits for it.
        s.baseline_again = Beside(
            lambda: settle(s.runner, lambda k: s.spec("none", "baseline-no-compile", attempt=k), target, baseline)
        )
    if EXIT_HANG_NOTE in (baseline.note or ""):
        s.unsteady.append(f"the run without compile hung at exit after its work was done; counted as {baseline.kind}")
        s.emit(Event.NOTE, text=s.unsteady[-1])
    if baseline.failed and target.matches(baseline.signature):
        raise NothingToIsolate("the script fails without compile too in the same way: that is not a compiler bug")
    return found, fails
