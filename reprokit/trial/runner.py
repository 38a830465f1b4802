"""The journal-backed Runner: answers a trial from journal.jsonl when it has seen its key, else schedules and runs it
(slots per process, a GPU per rank on a multi-GPU machine) and records the answer."""

from __future__ import annotations

import copy
import dataclasses
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import overload

from reprokit import settings
from reprokit.data.kinds import OutcomeKind, TrialKind
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.data.rundir import RunDir
from reprokit.trial import damaged_cache, reaper
from reprokit.trial.cache import compile_cache_root
from reprokit.trial.cancel import TrialsCancelled
from reprokit.trial.environment import ranks_of
from reprokit.trial.fork_policy import ForkWorker
from reprokit.trial.launch import run_trial
from reprokit.trial.ordered_map import ordered_map
from reprokit.trial.outcome import scheduler_ended
from reprokit.trial.policy import Judge, TrialPolicy
from reprokit.trial.repeat import ask_until_it_fails, map_until_it_fails

# A trial's seconds: a number, when less than the policy's; or a function asked while it runs, in place of the
# policy's (a limit the no-compile baseline's time sets while the trials beside it run: bisect/start.py).
Limit = float | Callable[[], float] | None


def _no_start(_spec: TrialSpec) -> None:
    pass


def budget_spent() -> Outcome:
    """A search trial not started because the run's --budget was spent: neither a pass nor the failure."""
    kind = OutcomeKind.BUDGET_SPENT
    return Outcome(kind=kind, signature=Signature(kind=kind), seconds=0.0, note="not run: the budget was spent")


def _checks_a_repro(spec: TrialSpec) -> bool:
    """A repro.py being written or checked in a fresh interpreter: run even past the budget."""
    return spec.mode == TrialKind.REPRO or spec.fresh_interpreter


# Every Runner of this process, so a signal that ends the run reaches the trials of each (stop_all).
_runners: weakref.WeakSet = weakref.WeakSet()


def stop_all() -> None:
    """A signal ends the run: every Runner stops for good (its trials killed or their jobs cancelled, none
    started after), and every trial group this process still knows of is killed (one run outside a Runner too)."""
    for runner in list(_runners):
        runner.stop()
    reaper.kill_all()


def _not_started(spec: TrialSpec) -> str:
    return f"{spec.label or spec.stage} not started: the run is stopping"


@dataclasses.dataclass
class _Counts:
    """What every view of one Runner counts together (views copy the Runner, and would copy plain ints)."""

    free: int  # the scheduler's free slots
    round: int = 0  # the parallel batch a trial ran in (journal's "round": reprokit plan packs them)
    executed: int = 0
    over_budget: int = 0  # search trials not started because the deadline had passed
    cancels: int = 0  # cancel() calls so far: a trial that ran across one has no answer
    stopped: bool = False  # stop(): the run is ending, no trial starts any more


class Runner:
    """Runs trials for one run folder: journal-backed cache, parallel batches, progress callbacks.
    on_trial(spec, outcome, cached) after each answer; on_start(spec) when a trial's process is about to start
    (never for an answer from the journal). How it asks is its `policy` (trial/policy.py): `with_policy` gives a
    view that asks otherwise and shares everything else; nothing outside trial/ sets a Runner's attributes."""

    def __init__(
        self,
        run_dir: RunDir,
        timeout: float,
        jobs: int = 1,
        on_trial: Callable[[TrialSpec, Outcome, bool], None] | None = None,
        judge: Judge | None = None,
        devices: list | None = None,
        warm_scripts: bool = False,
        warm_imports: tuple[str, ...] = (),
        on_start: Callable[[TrialSpec], None] = _no_start,
        remote=None,
    ):
        self.run_dir = run_dir
        # judge: re-judges a finished trial (bisect --kind slow: a passing run that is too slow is the failure)
        self.policy = TrialPolicy(timeout=timeout, judge=judge)
        # A cluster's executor (trial.executors.remote_executor) runs the trials as jobs; None: this machine.
        self.remote = remote
        self.cache_root = compile_cache_root(run_dir.file("cache"))
        damaged_cache.sweep(self.cache_root)
        # This run's C++ compile errors, replayed to its later trials that compile the same kernel source
        # (child/compile_errors.py); a run of its own, so an environment fixed between runs compiles afresh.
        # REPROKIT_REPLAY_COMPILE_ERRORS=0: every trial runs the compiler (the benchmark's other row).
        replay = settings.REPLAY_COMPILE_ERRORS.not_off()
        self.compile_errors = run_dir.file("compile_errors") if replay else None
        # On a machine with several GPUs each running trial has one to itself (CUDA_VISIBLE_DEVICES).
        self.devices: queue.Queue[str] = queue.Queue()
        for d in devices or ():
            self.devices.put(d)
        self.pinned = bool(devices)
        # Eligible trials fork from a worker that has imported torch already (REPROKIT_WARM=0: never); whole
        # scripts too when the caller has read the script and found it safe to fork (app.forks_cleanly), with the
        # script's own imports (warm_imports) loaded in the worker where they may be (trial/preload.py).
        self.forks = ForkWorker(self.cache_root, settings.WARM.not_off(), warm_scripts, warm_imports)
        self.jobs = max(1, jobs)
        self.on_trial = on_trial
        self.on_start = on_start
        self.cache: dict[str, Outcome] = {}
        self._lock = threading.Lock()
        self._rounds: dict = {}
        # The scheduler counts processes, not trials: a trial of N ranks takes N of the `jobs` slots.
        self._slots = threading.Condition()
        self._n = _Counts(free=self.jobs)
        for entry in run_dir.journal():
            self.cache[entry["key"]] = Outcome.from_dict(entry["outcome"])
        _runners.add(self)

    def with_policy(self, **changes) -> Runner:
        """A view of this Runner that asks its trials under this policy with `changes` (TrialPolicy's fields), and
        shares the rest: journal, scheduler, GPUs, fork worker, counters, stop and cancel."""
        view = copy.copy(self)
        view.policy = self.policy.replace(**changes)
        return view

    @property
    def timeout(self) -> float:
        """Seconds each trial may run (the policy's)."""
        return self.policy.timeout

    @property
    def env(self) -> dict:
        """The variables every trial runs with (the policy's)."""
        return dict(self.policy.env)

    @property
    def executed(self) -> int:
        """Trials run so far (not answered from the journal), by every view."""
        return self._n.executed

    @property
    def over_budget(self) -> int:
        """Search trials not started because the policy's deadline had passed, by every view."""
        return self._n.over_budget

    @property
    def stopped(self) -> bool:
        return self._n.stopped

    def __call__(self, spec: TrialSpec, limit: Limit = None, how: Callable | None = None) -> Outcome:
        """The trial's outcome, from the journal when asked before; `limit`: seconds it may run, when less than the
        policy's (a reduced script's candidate: bounded by the original's time, not by the run's limit), or a
        function asked while it runs in place of the policy's; `how`: how(device, seconds) runs it instead of a trial (the script run as
        written, bisect/plain.py), journaled as kind "plain". A flaky failure's policy asks it until it fails."""
        if self.policy.tries > 1:
            return ask_until_it_fails(lambda s: self._ask(s, limit, how), spec, self.policy)
        return self._ask(spec, limit, how)

    def _ask(self, spec: TrialSpec, limit: Limit = None, how: Callable | None = None) -> Outcome:
        """One trial's outcome, from the journal when asked before."""
        spec, cached = self._cached(spec)
        if cached is not None:
            if self.on_trial:
                self.on_trial(spec, cached, True)
            return cached
        # A trial started before the deadline runs to its end: cut short, it would be journaled as a hang.
        deadline = self.policy.deadline
        if deadline is not None and time.monotonic() >= deadline and not _checks_a_repro(spec):
            with self._lock:
                self._n.over_budget += 1
            return budget_spent()  # not journaled: a resumed run asks it again
        # Read together, under the lock stop() sets both under: a stop() after this read changes cancels, so the
        # trial is cut as it starts (its limit 0) and has no answer; one before it is seen here.
        with self._lock:
            stopped, cancels = self._n.stopped, self._n.cancels
        if stopped:  # a thread still asking once a signal ended the run: no new trial
            raise TrialsCancelled(_not_started(spec))
        key = spec.key()
        outcome = self._run_scheduled(spec, key, limit, cancels, how)
        if self._n.cancels != cancels:  # killed by cancel(): no answer, and none in the journal either
            raise TrialsCancelled(f"{spec.label or spec.stage} stopped with the run")
        if self.policy.judge is not None:
            outcome = self.policy.judge(spec, outcome)
        with self._lock:
            self.cache[key] = outcome
            self._n.executed += 1
        # the cluster's fault is no answer: not journaled, so a --resume asks it again
        if not scheduler_ended(outcome):
            self._journal(spec, key, outcome, how)
        if self.on_trial:
            self.on_trial(spec, outcome, False)
        return outcome

    def _journal(self, spec: TrialSpec, key: str, outcome: Outcome, how) -> None:
        # kind: a graph trial (a captured graph), or a run of a script (the user's, a reduced copy, repro.py);
        # round: the parallel batch it ran in (reprokit plan)
        self.run_dir.journal_append(
            {
                "key": key,
                "label": spec.label,
                "kind": TrialKind.PLAIN if how is not None else spec.mode,
                "spec": spec.to_dict(),
                "outcome": outcome.to_dict(),
                "round": self._round_of(spec),
            }
        )

    def _cached(self, spec: TrialSpec):
        """(the spec as it will run, the journal's answer or None)."""
        with self._lock:
            cached = self.cache.get(spec.key())
        switched = self.policy.switched(spec) if cached is None else spec
        if switched != spec:  # a question answered before the switches were set keeps its answer
            spec = switched
            with self._lock:
                cached = self.cache.get(spec.key())
        return spec, cached

    def _limit(self, limit: Limit, cancels: int | None = None) -> Callable[[], float]:
        """The trial's time limit, asked while it runs: the policy's, or `limit` when lower; none left once
        cancel() was called after the trial was asked (one that was still starting, its fork worker killed, is cut
        as it starts)."""
        policy = self.policy
        # A function stands for the policy's timeout: a limit that may rise or fall while the trial runs.
        base = limit if callable(limit) else (lambda: policy.limit(limit))
        return base if cancels is None else (lambda: 0.0 if self._n.cancels != cancels else base())

    def _run_scheduled(
        self, spec: TrialSpec, key: str, limit: Limit = None, cancels: int | None = None, how=None
    ) -> Outcome:
        """The trial once it has its slots (and GPUs); the GPUs go back unless the trial broke one."""
        taken = self._take(ranks_of(spec))
        # A trial of N ranks gets N GPUs of its own (CUDA_VISIBLE_DEVICES "a,b"): four 2-rank trials on 8 GPUs.
        device = ",".join(self.devices.get() for _ in range(taken)) if self.pinned else None
        healthy = True
        try:
            if self._n.stopped:  # stop() came while the trial waited for its slots: a cluster job would run on
                raise TrialsCancelled(_not_started(spec))
            self.on_start(spec)
            if how is not None:
                return how(device, self._limit(limit, cancels)())
            trial_dir = self.run_dir.trial_dir(key, spec.label or spec.stage)
            if self.remote is not None:
                return self.remote.run(spec, trial_dir, self.cache_root, self._limit(limit))
            outcome = run_trial(
                spec,
                trial_dir,
                self.cache_root,
                self._limit(limit, cancels),
                device=device,
                pool=self.forks.for_trial(spec, trial_dir),
                compile_errors=self.compile_errors,
            )
            if device is not None:
                outcome = dataclasses.replace(outcome, device=device)
            if outcome.kind == OutcomeKind.CUDA_FAULT:
                from reprokit.trial.devices import device_healthy

                healthy, said = device_healthy(device)
                outcome = dataclasses.replace(outcome, device_check=said)
        finally:
            if device is not None and (healthy or self.devices.empty()):
                # A device that stays broken after a fault gets no more trials, unless it is the last one.
                for d in device.split(","):
                    self.devices.put(d)
            with self._slots:
                self._n.free += taken
                self._slots.notify_all()
        return outcome

    def _take(self, ranks: int) -> int:
        """Wait for `ranks` free slots (all of them when a trial has more ranks than the run has jobs)."""
        need = min(ranks, self.jobs)
        with self._slots:
            self._slots.wait_for(lambda: self._n.free >= need)
            self._n.free -= need
        return need

    @property
    def fork_pool(self):
        """The fork worker's pool once started, else None."""
        return self.forks.pool

    def cancel(self) -> None:
        """Stop the trials running now (an error in a round; ordered_map starts no more of it): a cluster's jobs
        are cancelled (and no more submitted) and the local ones' process groups killed, none of them journaled.
        Local trials asked afterwards still run; a signal calls stop(), after which none does. Before, an
        interrupted round waited out its trials (CI at 9efb38b: a SLURM round's jobs, over 120 s)."""
        with self._lock:
            self._n.cancels += 1
        self._kill()

    def stop(self) -> None:
        """The run ends (a signal): cancel() now, and no trial starts after it, unlike after a cancel() alone."""
        with self._lock:
            self._n.stopped = True
            self._n.cancels += 1
        self._kill()

    def _kill(self) -> None:
        """The cluster's jobs cancelled (and no more submitted), the local trials' process groups killed."""
        if self.remote is not None:
            self.remote.cancel_all()
        reaper.kill_all()

    def close(self) -> None:
        """The fork worker stopped; every job still queued or running on the cluster cancelled."""
        self.forks.close()
        if self.remote is not None:
            self.remote.cancel_all()

    # Without `stop` every spec runs: no None in the list.
    @overload
    def map(self, specs: Iterable[TrialSpec], stop: None = None, limit: float | None = None) -> list[Outcome]: ...
    @overload
    def map(
        self, specs: Iterable[TrialSpec], stop: Callable[[int, Outcome], bool], limit: float | None = None
    ) -> list[Outcome | None]: ...
    def map(
        self, specs: Iterable[TrialSpec], stop: Callable[[int, Outcome], bool] | None = None, limit: float | None = None
    ) -> list:
        """Run specs in parallel (up to `jobs`); results in order. Once stop(i, outcome) is true for the
        i-th spec, specs after i that have not started are skipped (None). `limit` as for one trial. A flaky
        failure's policy asks each again, all at once, until it fails or its tries are spent."""
        if self.policy.tries > 1:
            return map_until_it_fails(lambda s, st: self._map(s, st, limit), list(specs), stop, self.policy)
        return self._map(list(specs), stop, limit)

    def _map(self, specs: list, stop: Callable[[int, Outcome], bool] | None, limit: float | None) -> list:
        """One round of specs, each asked once."""
        with self._lock:
            self._n.round += 1
            number = self._n.round
        # A trial runs with the policy's switches: its round is found under that key too.
        mine = {k: number for s in specs for k in (s.key(), self._cached(s)[0].key())}
        # Two threads map at once (the evidence phase): each round's keys are its own, added and then taken back.
        with self._lock:
            self._rounds.update(mine)
        try:
            if self.remote is None:
                return ordered_map(lambda spec: self._ask(spec, limit), specs, self.jobs, stop, abort=self.cancel)
            return self._map_remote(specs, stop, limit)
        finally:
            with self._lock:
                for key in mine:
                    if self._rounds.get(key) == number:
                        del self._rounds[key]

    def _map_remote(self, specs: list, stop, limit: float | None) -> list[Outcome | None]:
        """map on a cluster: the round's trials not in the journal go as one job array, submitted at once."""
        fresh: dict = {}
        for spec in specs:
            spec, cached = self._cached(spec)
            if cached is None:  # the same question twice in a round is one job
                fresh.setdefault(
                    spec.key(),
                    (
                        spec,
                        self.run_dir.trial_dir(spec.key(), spec.label or spec.stage),
                        self.cache_root,
                        self._limit(None),
                    ),
                )
        self.remote.submit_round(list(fresh.values()))
        try:
            return ordered_map(lambda spec: self._ask(spec, limit), specs, self.jobs, stop, abort=self.cancel)
        finally:
            # only this round's unused jobs: another thread's round, submitted meanwhile, is still to be asked
            self.remote.cancel_unused([t[1] for t in fresh.values()])

    def _round_of(self, spec: TrialSpec) -> int:
        """The round of a trial asked in a map, else a round of its own."""
        with self._lock:
            found = self._rounds.get(spec.key())
            if found is None:
                self._n.round += 1
                found = self._n.round
            return found
