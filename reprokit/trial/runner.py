"""Run trials: one subprocess each, in its own process group, with a timeout and a stack dump on hang."""
from __future__ import annotations

import atexit
import concurrent.futures as cf
import dataclasses
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Callable, Iterable, Optional, Union

from reprokit.data import signature as sig
from reprokit.data.ranks import free_port, merge_ranks, rank_dirs, rank_stacks
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.data.rundir import RunDir, private_opener, read_json, write_json_atomic
from reprokit.trial.cache import compile_cache_root

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Variables a trial must never inherit: they would silently change what is compiled or where caches go.
_SCRUBBED_ENV = ("TORCHDYNAMO_DISABLE", "TORCH_BISECT_BACKEND", "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX",
                 "TORCH_COMPILE_BACKEND", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR",
                 "TORCHDYNAMO_REPRO_AFTER", "TORCHDYNAMO_REPRO_LEVEL")


def trial_env(spec: TrialSpec, cache_root: str, trial_dir: str, base: Optional[dict] = None) -> dict:
    """The environment of one trial: the user's, with reprokit's caches and the stage's switches."""
    env = {k: v for k, v in (base if base is not None else os.environ).items() if k not in _SCRUBBED_ENV}
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_root, "inductor")
    env["TRITON_CACHE_DIR"] = os.path.join(cache_root, "triton")
    # Compiled-graph caches could answer a trial without running the failing codegen: off.
    env["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    env["TORCHINDUCTOR_AUTOGRAD_CACHE"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update({k: v.replace("{trial_dir}", trial_dir) for k, v in (spec.env or {}).items()})
    if spec.stage == "none":
        env["TORCHDYNAMO_DISABLE"] = "1"
    if spec.mode == "script":
        # Its own rendezvous port: trials side by side never meet at the script's port (EADDRINUSE).
        env["MASTER_PORT"] = str(free_port())
    if spec.subsystem and "name" in spec.subsystem:  # several names at once: the child's probe turns them off
        env["TORCH_BISECT_BACKEND"] = spec.subsystem["backend"]
        env["TORCH_BISECT_SUBSYSTEM"] = spec.subsystem["name"]
        env["TORCH_BISECT_MAX"] = str(spec.subsystem["max"])
    return env


# Read when used (CUDA's at its first use, which the worker never makes; TORCHDYNAMO_DISABLE at each compile),
# or read again when a warm trial starts (compat.reread_env_switches): a forked trial may differ from its worker
# in these and no others.
_REREAD_IN_CHILD = ("CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "TORCHDYNAMO_DISABLE", "TORCH_BISECT_BACKEND",
                    "TORCH_BISECT_SUBSYSTEM", "TORCH_BISECT_MAX", "TORCH_LOGS", "TORCH_TRACE", "MASTER_PORT")


def warm_eligible(spec: TrialSpec, scripts: bool = False) -> bool:
    """Trials a pre-imported worker may run: graphs and repros, and whole scripts when `scripts` (the script was
    read and sets no environment of its own). A trial with variables torch reads only at import starts cold, as
    does a multi-rank launch."""
    if spec.fresh_interpreter or any(k not in _REREAD_IN_CHILD for k in spec.env or {}) or _ranks(spec) > 1:
        return False
    return spec.mode in ("graph", "repro") or (scripts and spec.mode == "script")


def _comparable(env: dict) -> dict:
    return {k: v for k, v in env.items() if k not in _REREAD_IN_CHILD}


def run_trial(spec: TrialSpec, trial_dir: str, cache_root: str, timeout: Union[float, Callable[[], float]],
              python: str = sys.executable, device: Optional[str] = None, warm=None) -> Outcome:
    """Run one trial to completion or timeout and classify what happened. A callable timeout is asked again
    while the trial runs (the first trials start before the baseline has set the run's limit). warm: the worker
    to fork the trial from, when the caller found the trial eligible (warm_eligible); it is used only while
    alive and started with the trial's environment."""
    os.makedirs(trial_dir, exist_ok=True)
    spec_path = os.path.join(trial_dir, "spec.json")
    write_json_atomic(spec_path, spec.to_dict())
    ranks_before = [n for n in os.listdir(trial_dir) if n.startswith("rank")]  # a resumed multi-rank trial
    for stale in [os.path.join(d, f) for d in ["", *ranks_before] for f in ("result.json", "state.json")]:
        if os.path.exists(os.path.join(trial_dir, stale)):
            os.unlink(os.path.join(trial_dir, stale))
    env = _with_device(trial_env(spec, cache_root, trial_dir), device)
    started = time.monotonic()
    cold_note = ""
    if warm is not None and _comparable(env) == warm.env and warm.alive():
        from reprokit.trial.warm import ForkSetupFailed

        try:
            returncode, timed_out = warm.run(
                [spec_path, trial_dir], env, spec.cwd or trial_dir, os.path.join(trial_dir, "stdout.txt"),
                os.path.join(trial_dir, "stderr.txt"), lambda: limit_of(timeout), on_timeout=_dump_stacks_and_kill)
            return classify(trial_dir, returncode, timed_out, time.monotonic() - started)
        except ForkSetupFailed as e:
            cold_note = f"started cold: the warm worker's fork could not prepare torch ({e})"
            started = time.monotonic()
    outcome = _run_cold(spec, spec_path, trial_dir, env, python, timeout, started)
    if cold_note:
        outcome = dataclasses.replace(outcome, note="; ".join(n for n in (outcome.note, cold_note) if n))
    return outcome


def _run_cold(spec: TrialSpec, spec_path: str, trial_dir: str, env: dict, python: str,
              timeout: Union[float, Callable[[], float]], started: float) -> Outcome:
    """The trial in a fresh interpreter (or under torchrun), cut at the limit with a stack dump."""
    ranks = _ranks(spec)
    with open(os.path.join(trial_dir, "stdout.txt"), "wb", opener=private_opener) as out, \
            open(os.path.join(trial_dir, "stderr.txt"), "wb", opener=private_opener) as err:
        proc = subprocess.Popen(child_command(spec, spec_path, trial_dir, python),
                                cwd=spec.cwd or trial_dir, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        timed_out = False
        try:
            while True:
                left = started + limit_of(timeout) - time.monotonic()
                if left <= 0:
                    timed_out = True
                    _dump_stacks_and_kill(proc.pid, ranks)
                    break
                try:
                    proc.wait(timeout=min(left, 1.0))
                    break
                except subprocess.TimeoutExpired:
                    pass
        except BaseException:
            # Ctrl-C or a crash of reprokit: the trial's whole group goes with it.
            _kill_group(proc)
            raise
        finally:
            # Children the script left behind (compile workers) must not outlive the trial.
            _kill_group(proc)
    return classify(trial_dir, proc.returncode, timed_out, time.monotonic() - started, torchrun=ranks > 1)


def limit_of(timeout: Union[float, Callable[[], float]]) -> float:
    """Seconds a trial may run, as of now."""
    return timeout() if callable(timeout) else timeout


def _with_device(env: dict, device: Optional[str]) -> dict:
    if device is not None:
        env["CUDA_VISIBLE_DEVICES"] = device
    return env


def _ranks(spec: TrialSpec) -> int:
    return max(1, spec.ranks)


def child_command(spec: TrialSpec, spec_path: str, trial_dir: str, python: str) -> list:
    """The trial's command line: one child process, or N ranks of it under torchrun (pack --model --launch)."""
    ranks = _ranks(spec)
    child = ["-m", "reprokit.child.main", spec_path, trial_dir]
    sanitizer = (spec.env or {}).get("REPROKIT_SANITIZER")  # export/aoti_debug.py: the trial under compute-sanitizer
    if sanitizer and ranks == 1:
        return [sanitizer, "--tool", "memcheck", python, *child]
    if ranks > 1:
        # torchrun's agent and every rank share the trial's process group: a timeout takes them all down.
        return [python, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}", *child]
    return [python, *child]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _dump_stacks_and_kill(pid: int, ranks: int = 1) -> None:
    """A trial that timed out: every thread's stack into stacks.txt (faulthandler; every rank, torchrun's or
    the script's own, has its own), then its whole process group killed."""
    try:
        os.killpg(pid, signal.SIGUSR1)  # the whole group: ranks the script spawned dump theirs too
        time.sleep(1.0)
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def classify(trial_dir: str, returncode: int, timed_out: bool, seconds: float, torchrun: bool = False) -> Outcome:
    """Outcome of a finished trial from its result.json, or from how the process ended; a trial of several
    ranks answers with its first failing rank (data.ranks.merge_ranks)."""
    result_path = os.path.join(trial_dir, "result.json")
    state_path = os.path.join(trial_dir, "state.json")
    data: dict = {}
    if os.path.exists(result_path) and not timed_out:
        data = read_json(result_path)
    elif os.path.exists(state_path):
        data = read_json(state_path)
    if not timed_out:
        data = merge_ranks(trial_dir, data, torchrun)
    extra = {k: data.get(k) for k in ("graphs", "compiled", "user_backend", "compile_args", "bisect_detail",
                                      "failed_graph", "failed_ranks") if data.get(k) is not None}
    extra["counters"] = data.get("counters") or {}
    note = data.get("note") or ""
    if timed_out:
        signature = sig.HANG
        kind = "hang"
        # Where a rank waits says more than where the process that started the ranks does (mp.spawn's join).
        frame = next(filter(None, (_hang_frame(os.path.join(trial_dir, d, "stacks.txt"))
                                   for d in [*rank_dirs(trial_dir), ""])), None)
        if frame:
            signature = dataclasses.replace(signature, frame=frame)
        note = note or "timed out; every thread's stack is in stacks.txt"
        data["traceback"] = rank_stacks(trial_dir)  # every process's, each rank's included
    elif "kind" in data:
        kind = data["kind"]
        signature = Signature.from_dict(data["signature"])
        note = data.get("note") or note
    elif returncode is not None and returncode < 0:
        kind = "crash"
        signature = sig.for_signal(-returncode)
    else:
        kind = "crash"
        signature = Signature("crash", None, f"trial process exited {returncode} without a result", None)
    return Outcome(kind=kind, signature=signature, seconds=round(seconds, 3), returncode=returncode,
                   trial_dir=trial_dir, traceback=data.get("traceback", "") if "kind" in data or timed_out else "",
                   note=note, **extra)


def _hang_frame(stacks_path: str) -> Optional[str]:
    """The innermost frame of the main thread in a faulthandler dump, for the hang's report."""
    try:
        with open(stacks_path) as f:
            text = f.read()
    except OSError:
        return None
    block = None
    for part in text.split("\n\n"):
        if "most recent call first" in part and ("Current thread" in part or block is None):
            block = part
    if not block:
        return None
    for line in block.splitlines():
        line = line.strip()
        if line.startswith('File "'):
            return line
    return None


class Runner:
    """Runs trials for one run folder: journal-backed cache, parallel batches, progress callbacks."""

    def __init__(self, run: RunDir, timeout: float, jobs: int = 1,
                 on_trial: Optional[Callable[[TrialSpec, Outcome, bool], None]] = None,
                 judge: Optional[Callable[[TrialSpec, Outcome], Outcome]] = None,
                 devices: Optional[list] = None, warm_scripts: bool = False):
        self.run = run
        self.cache_root = compile_cache_root(run.file("cache"))
        # On a machine with several GPUs each running trial has one to itself (CUDA_VISIBLE_DEVICES).
        self.devices = queue.Queue()
        for d in devices or ():
            self.devices.put(d)
        self.pinned = bool(devices)
        # Eligible trials fork from a worker that has imported torch already (REPROKIT_WARM=0: never).
        self.use_warm = os.environ.get("REPROKIT_WARM", "1") != "0"
        # Whole scripts too, when the caller has read the script and found it safe to fork (app.forks_cleanly)
        self.warm_scripts = warm_scripts
        self.warm = None
        # Re-judges a finished trial (bisect --kind slow: a passing run that is too slow is the failure)
        self.judge = judge
        self.timeout = timeout
        self.jobs = max(1, jobs)
        self.on_trial = on_trial
        self.cache: dict[str, Outcome] = {}
        # Variables every trial from now on runs with (CUDA_LAUNCH_BLOCKING=1 once the failure is a CUDA fault)
        self.env: dict = {}
        self.executed = 0
        self._lock = threading.Lock()
        # The scheduler counts processes, not trials: a trial of N ranks takes N of the `jobs` slots.
        self._slots = threading.Condition()
        self._free = self.jobs
        for entry in run.journal():
            self.cache[entry["key"]] = Outcome.from_dict(entry["outcome"])

    def __call__(self, spec: TrialSpec) -> Outcome:
        key = spec.key()
        with self._lock:
            cached = self.cache.get(key)
        if cached is None and self.env:  # a question answered before the switches were set keeps its answer
            spec = dataclasses.replace(spec, env={**self.env, **(spec.env or {})})
            key = spec.key()
            with self._lock:
                cached = self.cache.get(key)
        if cached is not None:
            if self.on_trial:
                self.on_trial(spec, cached, True)
            return cached
        taken = self._take(_ranks(spec))
        # A trial of N ranks gets N GPUs of its own (CUDA_VISIBLE_DEVICES "a,b"): four 2-rank trials on 8 GPUs.
        device = ",".join(self.devices.get() for _ in range(taken)) if self.pinned else None
        healthy = True
        try:
            trial_dir = self.run.trial_dir(key, spec.label or spec.stage)
            outcome = run_trial(spec, trial_dir, self.cache_root, lambda: self.timeout, device=device,
                                warm=self._warm_for(spec, trial_dir))
            if device is not None:
                outcome = dataclasses.replace(outcome, device=device)
            if outcome.kind == "cuda_fault":
                from reprokit.trial.devices import device_healthy

                healthy, said = device_healthy(device)
                outcome = dataclasses.replace(outcome, device_check=said)
        finally:
            if device is not None and (healthy or self.devices.empty()):
                # A device that stays broken after a fault gets no more trials, unless it is the last one.
                for d in device.split(","):
                    self.devices.put(d)
            with self._slots:
                self._free += taken
                self._slots.notify_all()
        if self.judge is not None:
            outcome = self.judge(spec, outcome)
        with self._lock:
            self.cache[key] = outcome
            self.executed += 1
        self.run.journal_append({"key": key, "label": spec.label, "spec": spec.to_dict(),
                                 "outcome": outcome.to_dict()})
        if self.on_trial:
            self.on_trial(spec, outcome, False)
        return outcome

    def _take(self, ranks: int) -> int:
        """Wait for `ranks` free slots (all of them when a trial has more ranks than the run has jobs)."""
        need = min(ranks, self.jobs)
        with self._slots:
            self._slots.wait_for(lambda: self._free >= need)
            self._free -= need
        return need

    def _warm_for(self, spec: TrialSpec, trial_dir: str):
        """The warm worker, started on the first trial that may use it; None when it may not or failed."""
        if not self.use_warm or not warm_eligible(spec, self.warm_scripts):
            return None
        with self._lock:
            if self.warm is None:
                from reprokit.trial.devices import cuda_devices
                from reprokit.trial.warm import WarmPool

                self.warm = WarmPool(_comparable(trial_env(spec, self.cache_root, trial_dir)),
                                     cpu=not cuda_devices())
                atexit.register(self.warm.close)
            return self.warm if self.warm.alive() else None

    def close(self) -> None:
        if self.warm is not None:
            self.warm.close()
            self.warm = None

    def map(self, specs: Iterable[TrialSpec], stop: Optional[Callable[[int, Outcome], bool]] = None
            ) -> list[Optional[Outcome]]:
        """Run specs in parallel (up to `jobs`); results in order. Once stop(i, outcome) is true for the
        i-th spec, specs after i that have not started are skipped (None)."""
        specs = list(specs)
        if self.jobs == 1 or len(specs) <= 1:
            results: list[Optional[Outcome]] = [None] * len(specs)
            for i, s in enumerate(specs):
                results[i] = self(s)
                if stop and stop(i, results[i]):
                    break
            return results
        results = [None] * len(specs)
        finished = [False] * len(specs)
        state = {"next": 0, "halted": False}
        lock = threading.Lock()

        def run(i):
            # stop() is asked in spec order, by the worker that completes the order, before that worker takes
            # another spec: a spec not started when it says stop is never started.
            with lock:
                if state["halted"]:
                    return
            outcome = self(specs[i])
            with lock:
                results[i], finished[i] = outcome, True
                while not state["halted"] and state["next"] < len(specs) and finished[state["next"]]:
                    j = state["next"]
                    state["next"] += 1
                    if stop and stop(j, results[j]):
                        state["halted"] = True

        with cf.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for fut in [pool.submit(run, i) for i in range(len(specs))]:
                fut.result()
        return results
