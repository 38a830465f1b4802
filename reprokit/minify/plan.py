"""The whole run's time plan with default flags (issue 50: each case within 5 minutes in all, pack included): each
repro phase's share of time (the graph minify, in context, in the script, the source reduction) ends where what must
still run after it would carry the run past the target. A --budget rules instead, as its own deadline."""

from __future__ import annotations

from reprokit.data.budget import Budget
from reprokit.search import Plan

# Seconds the whole `reprokit bisect` run aims at, bisect to pack.
TARGET = 300.0
# Seconds a repro phase keeps however late it starts: on stop 57's corpus (tests/real_bugs/BASELINE.md), 16 of the
# 21 source reductions came within 2 lines of their final size within 60 s of their first candidate; the other
# five needed 64 to 183 s, more than a 5-minute run has left after a slow bisect in any case.
FLOOR = 60.0
# What runs after a repro phase, in runs of one answer (the script's run, for the source reduction): the repro's
# two checks in fresh interpreters and its run without compile, its reliability's further runs (up to 10 in all),
# a polished text checked again, the evidence's re-run and config flips, the pack.
RUNS_AFTER = 10
# What a fresh interpreter adds to each of those runs: `import torch` (about 2 s on 2 cores) and the set-up of its
# first compile, about as much again (the fork worker spares the candidates both: trial/forkserver). The corpus
# ran #197408's 2.2 s candidate as a 19.6 s fresh check, on a machine where `import torch` took 3.5 times as long.
OVERHEAD = 5.0


def whole_run_plan(started: float | None, budget: Budget | None) -> Plan | None:
    """The plan of a run that started at `started` (time.monotonic()); None under --budget, or with no start known
    (`reprokit minify RUN_DIR` alone), where each phase's own share holds."""
    if budget is not None or started is None:
        return None
    return Plan(end=started + TARGET, floor=FLOOR, runs_after=RUNS_AFTER, overhead=OVERHEAD)


# The evidence's one search: the config flips' smallest set, a bisection over them once no flip alone avoids the
# failure and all of them together do. It only adds a workaround to the report, so a run whose target would not hold
# it leaves it to a run given --budget. The flips' first round (all of them at once, beside each setting the script
# changed reset alone) is one run side by side and is always asked, with the boundary's re-run, torch's logs and the
# numbers' checks: the likeliest workaround (a script's own setting) is then found on any machine. Its cost, in
# fresh runs of the script: #188422 on the corpus asked 6 config runs in 108-117 s, its script's run 6.3 s and a
# fresh process's start 5 s, about 10 such runs: each config run compiles anew under other settings, which no
# cache holds.
COSTLY_EVIDENCE = {"config_set": "the smallest set of config flips that avoids the failure, where no flip alone does"}
CONFIG_RUNS = 10


def evidence_in_time(deferred: tuple, plan: Plan | None, now: float, one_run: float) -> tuple[tuple, tuple]:
    """(what the evidence asks, what it leaves) when it begins at `now`, one run of the script taking `one_run`
    seconds: all of it with no plan, or while the plan's end holds the costly search's runs (each with a fresh
    process's start); else all but that search."""
    if plan is None or now + CONFIG_RUNS * (plan.overhead + one_run) <= plan.end:
        return tuple(deferred), ()
    return tuple(d for d in deferred if d not in COSTLY_EVIDENCE), tuple(d for d in deferred if d in COSTLY_EVIDENCE)
