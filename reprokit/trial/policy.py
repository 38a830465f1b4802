"""How a Runner asks its trials, as one frozen value: the limit, the switches every trial runs with, the judge, the
--budget's deadline and how often a flaky failure's question is asked. A Runner hands out views with another
policy (`Runner.with_policy`) that share its journal, scheduler, workers and counters."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from typing import Any

from reprokit.data.kinds import TrialKind
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.search.share import Plan

Judge = Callable[[TrialSpec, Outcome], Outcome]


@dataclasses.dataclass(frozen=True)
class TrialPolicy:
    """timeout: seconds a trial may run; env: variables every trial runs with (CUDA_LAUNCH_BLOCKING=1 once the
    failure is a CUDA fault); compile_limit: seconds each compile may take once the original hung compiling;
    judge: re-judges a finished trial (bisect --kind slow); deadline: time.monotonic() past which no search trial
    starts (--budget); tries, target: a flaky failure's question is asked up to `tries` times until it fails the
    target's way (trial/repeat.py); plan: the whole run's time plan without --budget (minify/plan.py), which the
    repro phases' shares of time keep to; the Runner itself never reads it."""

    timeout: float
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    compile_limit: float | None = None
    judge: Judge | None = None
    deadline: float | None = None
    tries: int = 1
    target: Signature | None = None
    plan: Plan | None = None

    def __post_init__(self):
        # A view's switches cannot change under it: the mapping it was given is copied and read-only.
        object.__setattr__(self, "env", types.MappingProxyType(dict(self.env)))
        if self.tries > 1 and self.target is None:
            raise ValueError("a question asked more than once needs the failure it waits for (target)")

    def replace(self, **changes: Any) -> TrialPolicy:
        """This policy with `changes` (TrialPolicy's field names)."""
        return dataclasses.replace(self, **changes)

    def switched(self, spec: TrialSpec) -> TrialSpec:
        """The spec with this policy's switches: its variables (the spec's own win), and a hang's compile limit on
        the trials that compile (script and graph trials)."""
        if self.env:
            spec = dataclasses.replace(spec, env={**self.env, **(spec.env or {})})
        if self.compile_limit and spec.compile_limit is None and spec.mode in (TrialKind.SCRIPT, TrialKind.GRAPH):
            spec = dataclasses.replace(spec, compile_limit=self.compile_limit)
        return spec

    def limit(self, limit: float | None) -> float:
        """A trial's seconds: the policy's timeout, or `limit` when lower."""
        return self.timeout if limit is None else min(self.timeout, limit)
