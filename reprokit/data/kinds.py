"""The kinds of what a trial did and of the trials themselves, as str-valued enums: each member equals its string,
so JSON (journal.jsonl, verdict.json, result.json) reads and writes the same text as before."""

from __future__ import annotations

from enum import StrEnum


class OutcomeKind(StrEnum):
    """What one trial did. PASS is the only non-failure besides INVALID (a trial that could not be set up, e.g. a
    graph edit that does not type-check), SKIP (out of memory, or a job the scheduler ended) and BUDGET_SPENT (a
    search trial not started because the run's --budget was spent; never journaled)."""

    PASS = "pass"
    EXCEPTION = "exception"
    EXIT = "exit"
    CRASH = "crash"
    CUDA_FAULT = "cuda_fault"
    ACCURACY = "accuracy"
    HANG = "hang"
    SLOW = "slow"
    INVALID = "invalid"
    SKIP = "skip"
    BUDGET_SPENT = "budget_spent"


# The kinds that are not the script failing: neither the bug nor another one.
NOT_FAILURES = frozenset({OutcomeKind.PASS, OutcomeKind.INVALID, OutcomeKind.SKIP, OutcomeKind.BUDGET_SPENT})


class TrialKind(StrEnum):
    """What a trial runs (TrialSpec.mode; the journal's "kind" adds PLAIN, the script run exactly as written)."""

    SCRIPT = "script"
    GRAPH = "graph"
    REPRO = "repro"
    MODEL = "model"
    DIVERGENCE = "divergence"  # the first node whose compiled value differs from eager (child/divergence.py)
    PLAIN = "plain"
