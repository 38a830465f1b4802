"""Trials as SLURM jobs through submitit: a round's trials as one job array, each job running the same child
command the local launcher runs, in the trial folder on the shared filesystem; every job still queued or running
is cancelled when the search ends, fails or is interrupted."""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable

from reprokit import settings
from reprokit.data.executor import ExecutorSettings
from reprokit.data.records import Outcome, Signature, TrialSpec
from reprokit.errors import ReprokitError
from reprokit.trial.cancel import TrialsCancelled
from reprokit.trial.environment import PACKAGE_PARENT, ranks_of, trial_env
from reprokit.trial.launch import child_command, limit_of, prepare_trial, run_process
from reprokit.trial.outcome import SCHEDULER_ENDED, classify
from reprokit.trial.slurm_state import ENDED, KILLED, job_state, jobs_with_comment, scontrol

POLL_SECONDS = 0.5
RETRIED = KILLED | {"FAILED"}  # the states of a job that ended with no answer, asked once more
ASK_EVERY = 8  # polls between questions to the scheduler while a job has no result


def on_node(command: list, cwd: str, env: dict, trial_dir: str, limit: float, ranks: int) -> tuple:
    """What a job runs on each of its nodes: the child command with the trial's limit; (returncode, timed_out,
    seconds). Node 0's answer is the job's (submitit reads the first task's result)."""
    # submitit answers the scheduler's warning before the limit by ending the job itself (SLURM then records
    # FAILED); ignored, the scheduler ends the job at its limit and its records say TIMEOUT.
    signal.signal(signal.SIGUSR2, signal.SIG_IGN)
    started = time.monotonic()
    command = across_nodes(command, os.environ, first_host)
    node = node_rank(os.environ)
    logs = os.path.join(trial_dir, f"node{node}") if node else trial_dir  # each node's torchrun output its own
    os.makedirs(logs, exist_ok=True)
    returncode, timed_out = run_process(command, cwd, env, trial_dir, limit, ranks, started, logs=logs)
    return returncode, timed_out, time.monotonic() - started


def across_nodes(command: list, job_env, host_of: Callable[[str], str]) -> list:
    """A torchrun command made for one node, joined to the job's other nodes when the job has several: the same
    ranks per node, node ranks from SLURM_NODEID, and a static rendezvous on the job's first node (a port from the
    job id, so two trials on one node do not meet). One node, or no torchrun: the command as it is."""
    nodes = int(settings.SLURM_JOB_NUM_NODES.get(env=job_env) or settings.SLURM_NNODES.get(env=job_env) or 1)
    if nodes <= 1 or "torch.distributed.run" not in command or "--standalone" not in command:
        return command
    job = int(str(settings.SLURM_ARRAY_JOB_ID.get(env=job_env) or settings.SLURM_JOB_ID.get(env=job_env) or 0)) + int(
        settings.SLURM_ARRAY_TASK_ID.get(env=job_env) or 0
    )
    i = command.index("--standalone")
    joined = [
        f"--nnodes={nodes}",
        f"--node-rank={node_rank(job_env)}",
        f"--master-addr={host_of(settings.SLURM_JOB_NODELIST.get(env=job_env) or 'localhost')}",
        f"--master-port={20000 + job % 20000}",
    ]
    return command[:i] + joined + command[i + 1 :]


def node_rank(job_env) -> int:
    """This node's index in its job (0 outside a job of several nodes)."""
    return int(settings.SLURM_NODEID.get(env=job_env) or 0)


def first_host(nodelist: str) -> str:
    """The address of the first node of a SLURM node list ("node[03-05,09]"): its NodeAddr as the scheduler has
    it (a node's name need not resolve), else its name."""
    names = scontrol("show", "hostnames", nodelist).split()
    name = names[0] if names else nodelist.split(",")[0]
    m = re.search(r"\bNodeAddr=(\S+)", scontrol("show", "node", "-o", name))
    return m.group(1) if m else name


class SlurmExecutor:
    """Runs trials as jobs of the settings' partition; the jobs' own logs go under jobs_dir."""

    def __init__(self, settings: ExecutorSettings, jobs_dir: str, python: str = sys.executable):
        import submitit  # only a cluster run needs it

        self.settings = settings
        self.python = python
        # This run's jobs carry its own comment: at cancel the scheduler is asked for them, so that a job whose
        # submission Ctrl-C cut short (sbatch answered, submitit never saw the id) is cancelled too.
        self.comment = f"reprokit-{uuid.uuid4().hex[:8]}"
        # A trial of several ranks takes --slurm-nodes-per-trial nodes; a one-process trial (a graph, a repro)
        # takes one, whatever that setting says.
        self.executor = _executor(submitit, settings, jobs_dir, settings.nodes_per_trial, self.comment)
        self.single = (
            self.executor if settings.nodes_per_trial == 1 else _executor(submitit, settings, jobs_dir, 1, self.comment)
        )
        self._lock = threading.Lock()
        # submitit keeps an open batch on the executor itself: a second thread's batch raised "Nesting with
        # executor.batch()" (issue 45: the evidence phase's boundary re-run beside its config flips), and its
        # single submit would join the other's array. Every submission holds this lock, only for its sbatch call;
        # one executor stays, so cancel_all finds every job by this run's comment. cancel_all never takes it.
        self._submitting = threading.Lock()
        self._live: dict = {}  # job id -> job not yet seen to end
        self._queued: dict = {}  # trial folder -> (job, args), submitted with its round, not yet waited for
        self._cancelled = threading.Event()

    def submit_round(self, trials: list) -> None:
        """The round's trials [(spec, trial_dir, cache_root, timeout)] as one job array, submitted now."""
        if len(trials) < 2:
            return
        args = [self._args(*t) for t in trials]
        self._refuse_if_cancelled()
        jobs: dict = {}
        for executor in {id(self._for(a)): self._for(a) for a in args}.values():
            mine = [i for i, a in enumerate(args) if self._for(a) is executor]
            with self._submitting, executor.batch():
                jobs.update((i, executor.submit(on_node, *args[i])) for i in mine)
        ordered = [jobs[i] for i in range(len(args))]
        self._register(ordered, queued={t[1]: (job, a) for t, job, a in zip(trials, ordered, args)})

    def _for(self, args: tuple):
        """The executor for a trial's job: several nodes for a trial of several ranks, else one."""
        return self.executor if args[-1] > 1 else self.single

    def run(self, spec: TrialSpec, trial_dir: str, cache_root: str, timeout: float | Callable[[], float]) -> Outcome:
        """The trial as a job, retried once if it ended without an answer; its Outcome from what it left behind."""
        with self._lock:
            queued = self._queued.pop(trial_dir, None)
        job, args = queued if queued else (None, self._args(spec, trial_dir, cache_root, timeout))
        states = []
        for _ in range(2):
            if job is None:
                job = self._submit(args)
            state, value = self._wait(job)
            if self._cancelled.is_set():
                # Cancelled by reprokit itself (Ctrl-C, an error): no answer, and none in the journal either.
                raise TrialsCancelled(f"job {job.job_id} cancelled with the run")
            states.append(f"job {job.job_id} {state}")
            # No answer: the scheduler killed it, or the job failed before on_node returned the trial's own exit
            # (a node's fault, not the trial's), so it is asked once more, from a folder with no result left.
            # Not a job out of memory (the trial's own, again) or one cancelled from outside.
            if value is not None or state not in RETRIED:
                break
            prepare_trial(spec, trial_dir)
            job = None
        if value is None:
            return _killed(trial_dir, states)
        returncode, timed_out, seconds = value
        return classify(trial_dir, returncode, timed_out, seconds, torchrun=ranks_of(spec) > 1)

    def _args(self, spec: TrialSpec, trial_dir: str, cache_root: str, timeout) -> tuple:
        spec_path = prepare_trial(spec, trial_dir)
        env = trial_env(spec, cache_root, trial_dir)
        return (
            child_command(spec, spec_path, trial_dir, self.python),
            spec.cwd or trial_dir,
            env,
            trial_dir,
            limit_of(timeout),
            ranks_of(spec),
        )

    def _submit(self, args: tuple):
        self._refuse_if_cancelled()
        with self._submitting:
            job = self._for(args).submit(on_node, *args)
        self._register([job])
        return job

    def _register(self, jobs: list, queued: dict | None = None) -> None:
        """Jobs just submitted become known to cancel_all; if it ran meanwhile (another thread's sbatch was under
        way), they are cancelled at once instead."""
        with self._lock:
            late = self._cancelled.is_set()
            if not late:
                self._live.update((job.job_id, job) for job in jobs)
                self._queued.update(queued or {})
        if late:
            self._cancel_late(jobs)

    def _refuse_if_cancelled(self) -> None:
        if self._cancelled.is_set():
            raise TrialsCancelled("the run is stopping: no more jobs")

    def _cancel_late(self, jobs: list) -> None:
        """Jobs submitted while cancel_all ran (another thread's sbatch was under way): cancelled at once."""
        for job in jobs:
            job.cancel(check=False)
        raise TrialsCancelled("cancelled with the run as it was submitted")

    def _wait(self, job) -> tuple:  # type: ignore[return]  # an endless loop: it returns from inside
        """(the job's final state, what on_node returned or None) once the scheduler says it ended. A result is
        trusted only from a job that was not killed: at its limit SLURM's SIGTERM ends the trial first, and on_node
        returns that as if the trial had crashed. Once the run is cancelled it waits no longer: cancel_all has
        cancelled the job, and Ctrl-C must not wait out the scheduler's answer (CI at 9efb38b: over 120 s)."""
        for tick in itertools.count():
            if self._cancelled.is_set():
                return "CANCELLED", None
            finished = job.paths.result_pickle.exists()
            # The scheduler is asked every few seconds until the job has written its result (a stat is free;
            # scontrol is an RPC to slurmctld, and every running trial polls).
            if not finished and tick % ASK_EVERY:
                time.sleep(POLL_SECONDS)
                continue
            state = job_state(job.job_id)
            if state in ENDED or (state is None and finished):  # None: a cluster that forgot the job already
                outcome, value = _read_result(job) if finished else (None, None)
                self._forget(job)
                if state in KILLED:
                    return state, None
                if outcome == "success":
                    return "COMPLETED", value
                return (_said(str(value)) if outcome == "error" else state or "UNKNOWN"), None
            time.sleep(POLL_SECONDS)

    def _forget(self, job) -> None:
        with self._lock:
            self._live.pop(job.job_id, None)

    def cancel_all(self) -> list:
        """Cancel every job of this run still queued or running, and refuse new ones; their ids. The executor is
        done after this (each Runner has its own)."""
        with self._lock:
            self._cancelled.set()
            live, self._live, self._queued = list(self._live.values()), {}, {}
        known = {j.job_id.split("_")[0] for j in live}  # an array's tasks share its id before the "_"
        # Those whose submission was cut short too: the scheduler knows them by the run's comment.
        unseen = [i for i in jobs_with_comment(self.comment) if i.split("_")[0] not in known]
        ids = [j.job_id for j in live] + unseen
        if ids:  # one scancel for all of them: each is an RPC to slurmctld
            try:
                subprocess.run(["scancel", *ids], capture_output=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        return ids

    def cancel_unused(self, trial_dirs: list) -> None:
        """Jobs of a round the search stopped before asking (ordered_map's skipped items): cancelled. Only that
        round's (its trial folders): another thread's round, submitted meanwhile, is still to be waited for."""
        with self._lock:
            unused = [self._queued.pop(d) for d in trial_dirs if d in self._queued]
        for job, _ in unused:
            job.cancel(check=False)
            self._forget(job)


def _executor(submitit, settings: ExecutorSettings, jobs_dir: str, nodes: int, comment: str):
    """A submitit executor for jobs of `nodes` nodes, one task each, on the settings' partition."""
    executor = submitit.AutoExecutor(folder=os.path.join(jobs_dir, "%j"), cluster="slurm")
    params = {
        "slurm_time": settings.time,
        "nodes": nodes,
        "tasks_per_node": 1,
        "slurm_array_parallelism": settings.max_jobs,
        "name": "reprokit-trial",
        # submitit warns the job this long before its limit (default 90 s, more than a 1-minute job has)
        "slurm_signal_delay_s": min(90, settings.time * 60 // 4),
        # The node imports this reprokit whatever the submitting shell's PYTHONPATH was.
        "slurm_setup": [f"export PYTHONPATH={PACKAGE_PARENT}${{PYTHONPATH:+:$PYTHONPATH}}"],
        "slurm_additional_parameters": {"comment": comment},
    }
    if settings.partition:
        params["slurm_partition"] = settings.partition
    if settings.account:
        params["slurm_account"] = settings.account
    if settings.gpus_per_node:
        params["gpus_per_node"] = settings.gpus_per_node
    executor.update_parameters(**params)
    return executor


def _killed(trial_dir: str, states: list) -> Outcome:
    """A job the scheduler (or a crash of the job itself) ended without an answer: never the bug."""
    note = f"{SCHEDULER_ENDED}: " + ", then ".join(states) + "; not the failure"
    return Outcome(
        kind="skip",
        signature=Signature("skip", None, note, None),
        seconds=0.0,
        returncode=None,
        trial_dir=trial_dir,
        note=note,
    )


def _said(error: str) -> str:
    """The state behind submitit's error: its signal handler answers the scheduler's warning of the time limit
    (or of preemption) by ending the job with an UncompletedJobError before SLURM says TIMEOUT."""
    if "timed-out" in error:
        return "TIMEOUT"
    return "PREEMPTED" if "preempted" in error else "FAILED"


def _read_result(job) -> tuple:
    """("success", value) or ("error", traceback text) from submitit's result pickle."""
    import pickle

    try:
        with job.paths.result_pickle.open("rb") as f:
            return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None, None


def make_slurm(settings: ExecutorSettings, jobs_dir: str) -> SlurmExecutor:
    """The executor, or bad input when submitit is missing."""
    try:
        return SlurmExecutor(settings, jobs_dir)
    except ImportError:
        raise ReprokitError("--executor slurm needs submitit (pip install submitit)") from None


def write_token(path: str, token: str) -> None:
    """The first tiny job: a file in the output folder, for the submitting machine to read back."""
    with open(path, "w") as f:
        f.write(token)
