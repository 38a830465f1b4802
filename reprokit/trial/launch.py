"""Launch one trial, a fork of the fork worker or a fresh interpreter, in its own process group; kill it at its limit."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from reprokit import settings
from reprokit.data import signature as sig
from reprokit.data.records import Outcome, TrialSpec
from reprokit.data.rundir import private_opener, write_json_atomic
from reprokit.trial import reaper
from reprokit.trial.damaged_cache import damaged_binary, half_written_package, remove
from reprokit.trial.environment import ranks_of, trial_env, with_device
from reprokit.trial.fork_policy import comparable
from reprokit.trial.outcome import answered, classify
from reprokit.trial.scratch import scratch

DAMAGED_RERUNS = 3  # re-runs of a trial that met a half-written kernel binary (a fourth meeting is its outcome)


def run_trial(
    spec: TrialSpec,
    trial_dir: str,
    cache_root: str,
    timeout: float | Callable[[], float],
    python: str = sys.executable,
    device: str | None = None,
    pool=None,
    compile_errors: str | None = None,
) -> Outcome:
    """Run one trial to completion or timeout and classify what happened. A callable timeout is asked again
        while the trial runs (the first trials start before the baseline has set the run's limit). pool: the fork worker
        to fork the trial from, when the caller found the trial eligible (fork_eligible); it is used only while
        alive and started with the trial's environment. compile_errors: the run's folder of C++ compile errors its
        trials replay (trial_env). A trial that could not load a kernel binary another trial,
        killed mid-link, left half-written in the shared cache runs once more with that binary removed; one that
    could not open an AOTInductor package another trial was writing runs once more."""
    outcome = _run_once(spec, trial_dir, cache_root, timeout, python, device, pool, compile_errors)
    said = []
    for _ in range(DAMAGED_RERUNS):
        # The re-run may meet another half-written binary (CI at 8d7a70e: two in a row, in a machine's cache shared
        # by two test workers), so each one met is removed and the trial asked again, a bounded number of times.
        damaged = damaged_binary(outcome, cache_root)
        if damaged is not None:
            remove(damaged)
            said.append(
                f"run again: a killed trial had left {os.path.basename(damaged)} half-written in the compile cache"
            )
        elif half_written_package(outcome):
            # CI at 75fdd9a: a repro's check loaded the package while a trial beside it rewrote the same file.
            said.append("run again: the AOTInductor package it loaded was being written by another trial")
        else:
            break
        outcome = _run_once(spec, trial_dir, cache_root, timeout, python, device, pool, compile_errors)
    return dataclasses.replace(outcome, note="; ".join(n for n in (outcome.note, *said) if n)) if said else outcome


def _run_once(
    spec: TrialSpec,
    trial_dir: str,
    cache_root: str,
    timeout: float | Callable[[], float],
    python: str,
    device: str | None,
    pool,
    compile_errors: str | None,
) -> Outcome:
    """One try of the trial, forked from the fork worker where it can be, else cold."""
    spec_path = prepare_trial(spec, trial_dir)
    env = with_device(trial_env(spec, cache_root, trial_dir, compile_errors=compile_errors, python=python), device)
    started = time.monotonic()
    cold_note = ""
    if pool is not None and comparable(env) == pool.env and pool.alive():
        from reprokit.trial.fork_pool import ForkSetupFailed

        try:
            with scratch(env) as forked_env:
                returncode, timed_out = pool.fork_trial(
                    [spec_path, trial_dir],
                    forked_env,
                    spec.cwd or trial_dir,
                    os.path.join(trial_dir, "stdout.txt"),
                    os.path.join(trial_dir, "stderr.txt"),
                    lambda: limit_of(timeout),
                    on_timeout=_dump_stacks_and_kill,
                )
            return _seen_to_its_end(classify(trial_dir, returncode, timed_out, time.monotonic() - started), returncode)
        except ForkSetupFailed as e:
            cold_note = f"started cold: the warm worker's fork could not prepare torch ({e})"
            started = time.monotonic()
    outcome = _run_cold(spec, spec_path, trial_dir, env, python, timeout, started)
    if cold_note:
        outcome = dataclasses.replace(outcome, note="; ".join(n for n in (outcome.note, cold_note) if n))
    return outcome


def _seen_to_its_end(outcome: Outcome, returncode: int | None) -> Outcome:
    """A forked trial whose worker ended before reporting its exit (no returncode, not a hang) passed only if its
    result.json was written before the worker died, a race: a script that kills its parent passed in 1 of 3 runs
    of test_warm_restart. Its exit unseen, it is no pass: the trial is lost, and the next one forks a new worker."""
    if returncode is not None or outcome.kind != "pass":
        return outcome
    said = "the warm worker ended before the trial's exit was seen (did the script signal its parent?)"
    return dataclasses.replace(outcome, kind="crash", signature=sig.Signature("crash", None, said, None), note=said)


def prepare_trial(spec: TrialSpec, trial_dir: str) -> str:
    """The trial folder with spec.json and no result left from an earlier try; the spec's path."""
    os.makedirs(trial_dir, exist_ok=True)
    spec_path = os.path.join(trial_dir, "spec.json")
    write_json_atomic(spec_path, spec.to_dict())
    ranks_before = [n for n in os.listdir(trial_dir) if n.startswith("rank")]  # a resumed multi-rank trial
    for stale in [os.path.join(d, f) for d in ["", *ranks_before] for f in ("result.json", "state.json")]:
        if os.path.exists(os.path.join(trial_dir, stale)):
            os.unlink(os.path.join(trial_dir, stale))
    return spec_path


def _run_cold(
    spec: TrialSpec,
    spec_path: str,
    trial_dir: str,
    env: dict,
    python: str,
    timeout: float | Callable[[], float],
    started: float,
) -> Outcome:
    """The trial in a fresh interpreter (or under torchrun), cut at the limit with a stack dump."""
    ranks = ranks_of(spec)
    returncode, timed_out = run_process(
        child_command(spec, spec_path, trial_dir, python),
        spec.cwd or trial_dir,
        env,
        trial_dir,
        timeout,
        ranks,
        started,
    )
    return classify(trial_dir, returncode, timed_out, time.monotonic() - started, torchrun=ranks > 1)


def run_process(
    command: list,
    cwd: str,
    env: dict,
    trial_dir: str,
    timeout: float | Callable[[], float],
    ranks: int,
    started: float,
    logs: str | None = None,
) -> tuple:
    """(returncode, timed_out) of the trial's command in its own process group, its output in the trial folder (or
    `logs`: another node of the same trial writes beside it); here or on a cluster node (trial/slurm.py), the same
    way. Its temporary files go with it (trial/scratch.py)."""
    logs = logs or trial_dir
    with (
        scratch(env) as env,
        open(os.path.join(logs, "stdout.txt"), "wb", opener=private_opener) as out,
        open(os.path.join(logs, "stderr.txt"), "wb", opener=private_opener) as err,
    ):
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            preexec_fn=reaper.die_with_parent,
        )
        reaper.watch(proc.pid)  # its group dies with reprokit (or the cluster job running it), however that ends
        timed_out = False
        answered_at = None
        try:
            while True:
                now = time.monotonic()
                left = started + limit_of(timeout) - now
                # Every process wrote its result and the trial still runs: a teardown that may never end (gloo's
                # at exit, an exit hook). It gets a grace, then is cut like a hang, and classify counts it by its
                # result (CI: a no-compile run that hung at exit held its trial 318 s, the limit, not 40).
                answered_at = (answered_at or now) if answered(trial_dir) else None
                if left <= 0 or (answered_at is not None and now - answered_at > exit_grace(answered_at - started)):
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
            kill_group(proc)
            raise
        finally:
            # Children the script left behind (compile workers) must not outlive the trial.
            kill_group(proc)
            reaper.unwatch(proc.pid)
    return proc.returncode, timed_out


def exit_grace(seconds_to_answer: float) -> float:
    """Seconds a trial may go on after every process wrote its result: 30, or half the time it took to get
    there (a 40B job's NCCL teardown takes a while; a script's own work after its ranks' answers may too)."""
    return max(30.0, seconds_to_answer / 2)


def limit_of(timeout: float | Callable[[], float]) -> float:
    """Seconds a trial may run, as of now."""
    return timeout() if callable(timeout) else timeout


def child_command(spec: TrialSpec, spec_path: str, trial_dir: str, python: str) -> list:
    """The trial's command line: one child process, or N ranks of it under torchrun (pack --model --launch)."""
    ranks = ranks_of(spec)
    child = ["-m", "reprokit.child.main", spec_path, trial_dir]
    sanitizer = settings.SANITIZER.get(env=spec.env or {})  # export/aoti_debug.py: the trial under compute-sanitizer
    if sanitizer and ranks == 1:
        return [sanitizer, "--tool", "memcheck", python, *child]
    if ranks > 1:
        # torchrun's agent and every rank share the trial's process group: a timeout takes them all down.
        return [python, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={ranks}", *child]
    return [python, *child]


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process's whole group, then a bounded wait for it."""
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
