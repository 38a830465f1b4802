"""Which trials may fork from the fork worker, and the worker itself, started on the first trial that may."""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from reprokit.data.kinds import TrialKind
from reprokit.data.records import TrialSpec
from reprokit.data.warm_cache import COMPILE_ERRORS
from reprokit.trial.environment import ranks_of, trial_env

if TYPE_CHECKING:
    from reprokit.trial.fork_pool import ForkPool

# Read when used (CUDA's at its first use, which the worker never makes; TORCHDYNAMO_DISABLE at each compile),
# or read again when a warm trial starts (compat.reread_env_switches): a forked trial may differ from its worker
# in these and no others.
_REREAD_IN_CHILD = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_LAUNCH_BLOCKING",
    "TORCHDYNAMO_DISABLE",
    "TORCH_BISECT_BACKEND",
    "TORCH_BISECT_SUBSYSTEM",
    "TORCH_BISECT_MAX",
    "TORCH_LOGS",
    "TORCH_TRACE",
    "MASTER_PORT",
    COMPILE_ERRORS,
)


# Times a run starts its warm worker again after a trial killed it.
RESTARTS = 3


def fork_eligible(spec: TrialSpec, scripts: bool = False) -> bool:
    """Trials a pre-imported worker may run: graphs and repros, and whole scripts when `scripts` (the script was
    read and sets no environment of its own). A trial with variables torch reads only at import starts cold, as
    does a multi-rank launch."""
    if spec.fresh_interpreter or any(k not in _REREAD_IN_CHILD for k in spec.env or {}) or ranks_of(spec) > 1:
        return False
    return spec.mode in (TrialKind.GRAPH, TrialKind.REPRO, TrialKind.DIVERGENCE) or (
        scripts and spec.mode == TrialKind.SCRIPT
    )


def comparable(env: dict) -> dict:
    """The variables a fork must share with its worker (those it cannot read again)."""
    return {k: v for k, v in env.items() if k not in _REREAD_IN_CHILD}


class ForkWorker:
    """The run's one fork worker, started lazily by the first eligible trial; None once it may not be used."""

    def __init__(self, cache_root: str, enabled: bool, scripts: bool, imports: tuple[str, ...] = ()):
        self.cache_root = cache_root
        self.enabled = enabled
        self.scripts = scripts
        self.imports = imports  # the script's own imports, loaded in the worker too (trial/preload.py)
        self.pool: ForkPool | None = None
        self.restarts = 0
        self._lock = threading.Lock()

    def for_trial(self, spec: TrialSpec, trial_dir: str):
        """The warm worker, started on the first trial that may use it; None when it may not or failed."""
        if not self.enabled or not fork_eligible(spec, self.scripts):
            return None
        with self._lock:
            if self.pool is not None and self._died() and self.restarts < RESTARTS:
                # A trial that killed its worker (a script signalling its parent) costs that trial, not the warm
                # forks of every later one.
                self.restarts += 1
                self.pool.close()
                self.pool = None
            if self.pool is None:
                from reprokit.trial.devices import cuda_devices
                from reprokit.trial.fork_pool import ForkPool

                self.pool = ForkPool(
                    comparable(trial_env(spec, self.cache_root, trial_dir)),
                    cpu=not cuda_devices(),
                    imports=self.imports,
                )
                atexit.register(self.pool.close)
            return self.pool if self.pool.alive() else None

    def _died(self) -> bool:
        """The worker was serving and its process is gone (not one that refused: setup failed, no CUDA for forks)."""
        return self.pool is not None and self.pool.ready and self.pool.proc.poll() is not None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
