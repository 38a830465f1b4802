"""Every environment variable reprokit reads, each read here alone: its name, its values, its default, who sets it
and what it means. docs/settings.md is the table `table()` prints (`python -m reprokit.settings`);
tests/test_settings.py keeps the code, this module and that page in step.

The start-up hook imports this module in every python process of a trial or a capture, so it imports little: os
and typing, which site has mostly loaded already (dataclasses would cost 35 ms a process)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import NamedTuple, overload

# Who sets a variable: the user (their shell, their job script), reprokit itself in its trials' environment (or
# `reprokit capture` in the job it starts), or the launcher that starts the ranks (torchrun, SLURM).
USER, REPROKIT, LAUNCHER = "user", "reprokit", "launcher"
PREFIX = "REPROKIT_"  # every variable of reprokit's own; a run "as the user runs it" has none of them


class Setting(NamedTuple):
    """One environment variable: the table's row, and its one reader."""

    name: str
    values: str
    default: str
    set_by: str
    meaning: str

    @overload
    def get(self, default: str, *, env: Mapping[str, str] | None = None) -> str: ...
    @overload
    def get(self, default: None = None, *, env: Mapping[str, str] | None = None) -> str | None: ...
    def get(self, default: str | None = None, *, env: Mapping[str, str] | None = None) -> str | None:
        """Its value in `env` (this process's environment by default), `default` when unset."""
        return (os.environ if env is None else env).get(self.name, default)

    def required(self, *, env: Mapping[str, str] | None = None) -> str:
        """Its value, where the caller runs only when it is set (a KeyError otherwise, as os.environ[name])."""
        return (os.environ if env is None else env)[self.name]

    def is_set(self, *, env: Mapping[str, str] | None = None) -> bool:
        """Set at all, even to an empty string."""
        return self.name in (os.environ if env is None else env)

    def on(self, *, env: Mapping[str, str] | None = None) -> bool:
        """A switch that is off unless set to 1."""
        return self.get(env=env) == "1"

    def not_off(self, *, env: Mapping[str, str] | None = None) -> bool:
        """A switch that is on unless set to 0."""
        return self.get(env=env) != "0"


# reprokit's own switches, for the user.
WARM = Setting(
    "REPROKIT_WARM",
    "0, 1",
    "1",
    USER,
    "0: every trial starts a fresh interpreter; else eligible trials fork from a worker that imported torch once",
)
REPLAY_COMPILE_ERRORS = Setting(
    "REPROKIT_REPLAY_COMPILE_ERRORS",
    "0, 1",
    "1",
    USER,
    "0: every trial runs the C++ compiler; else a compile error met earlier in the run is raised again",
)
CACHE_DIR = Setting(
    "REPROKIT_CACHE_DIR",
    "a folder, or `run`",
    "`$XDG_CACHE_HOME/reprokit`",
    USER,
    "reprokit's per-machine cache (compiled kernels, environment reports); `run`: a cold cache in each run folder",
)
TORCH_ENVS = Setting(
    "REPROKIT_TORCH_ENVS",
    "a folder",
    "`~/.cache/reprokit/torch-envs`",
    USER,
    "where `reprokit versions` keeps one environment per torch release (`--cache-dir` wins)",
)
REPRO_RUNS = Setting(
    "REPROKIT_REPRO_RUNS",
    "a number",
    "10",
    USER,
    "a verified repro.py is run up to this many times in fresh interpreters, stopping at 3 failures; under 3 "
    "(all of them, when fewer than 3) it is not called verified",
)
CAPTURE = Setting(
    "REPROKIT_CAPTURE",
    "a folder",
    "unset",
    f"{USER}, or `reprokit capture`",
    "set, with the start-up hook on PYTHONPATH: every python process of the job records its failing graph there",
)
CAPTURE_MAX_INPUT_BYTES = Setting(
    "REPROKIT_CAPTURE_MAX_INPUT_BYTES",
    "a number of bytes",
    "67108864 (64 MiB)",
    f"{USER}, or `reprokit capture`",
    "the recorder saves real input values up to this size per tensor",
)
CAPTURE_MAX_GRAPH_INPUT_BYTES = Setting(
    "REPROKIT_CAPTURE_MAX_GRAPH_INPUT_BYTES",
    "a number of bytes",
    "unset (4 x the per-tensor cap)",
    "`reprokit capture --max-graph-input-bytes`",
    "the recorder saves real input values up to this size in all, per graph (indices and masks up to 16 MiB always)",
)
CAPTURE_INPUTS_ON_DISK = Setting(
    "REPROKIT_CAPTURE_INPUTS_ON_DISK",
    "`1`",
    "unset",
    "`reprokit capture --keep-inputs-on-disk`",
    "inputs over the caps are streamed to the case folder's disk instead of replaced by stand-ins",
)
CAPTURE_COMPILE_TIMEOUT = Setting(
    "REPROKIT_CAPTURE_COMPILE_TIMEOUT",
    "seconds",
    "unset (no limit)",
    "`reprokit capture --compile-timeout`",
    "one graph's compile that runs longer is written out as a hang, with its stacks",
)
CAPTURE_FALL_BACK = Setting(
    "REPROKIT_CAPTURE_FALL_BACK",
    "`1`",
    "unset",
    "`reprokit capture --fall-back-to-eager`",
    "a graph past the compile limit runs eagerly and the job goes on",
)
CAPTURE_CHECK_CALLS = Setting(
    "REPROKIT_CAPTURE_CHECK_CALLS",
    "a number of calls",
    "unset (no check)",
    "`reprokit capture --check-accuracy`",
    "each compiled graph's first calls also run eagerly; the first graph that diverges is written out",
)

# What reprokit writes into its trials' environment, and the trial reads back.
CACHE_PER_RANK = Setting(
    "REPROKIT_CACHE_PER_RANK",
    "1",
    "unset",
    REPROKIT,
    "1: each rank of a launch gets an inductor cache folder of its own under the trial's",
)
COMPILE_ERRORS = Setting(
    "REPROKIT_COMPILE_ERRORS",
    "a folder",
    "unset",
    REPROKIT,
    "the run's C++ compile errors, which the trial raises again instead of compiling the same source",
)
SANITIZER = Setting(
    "REPROKIT_SANITIZER",
    "a compute-sanitizer executable",
    "unset",
    REPROKIT,
    "the trial runs under compute-sanitizer (memcheck)",
)
TRIAL_SPEC = Setting(
    "REPROKIT_TRIAL_SPEC",
    "a spec.json path",
    "unset",
    REPROKIT,
    "set in a script trial: the processes it starts run as its ranks (the start-up hook reads it)",
)
TRIAL_DIR = Setting("REPROKIT_TRIAL_DIR", "a folder", "unset", REPROKIT, "the trial's folder, for the ranks it starts")
TRIAL_PID = Setting(
    "REPROKIT_TRIAL_PID",
    "a process id",
    "unset",
    REPROKIT,
    "the trial process: only its own children are its ranks (not compile workers')",
)
MASTER_PORT_PINNED = Setting(
    "REPROKIT_MASTER_PORT",
    "a port",
    "unset",
    REPROKIT,
    "the trial's own rendezvous port: init_process_group meets there whatever port the script wrote",
)
REPRO_CACHE_RUN = Setting(
    "REPRO_CACHE_RUN",
    "1",
    "unset",
    REPROKIT,
    "read by a cache repro.py: set in the two runs its driver starts, where the script proper runs",
)

# Others' variables that decide what reprokit does.
RANK = Setting("RANK", "a number", "0", LAUNCHER, "this process's rank: its trial folder, capture folder and seed")
LOCAL_RANK = Setting(
    "LOCAL_RANK", "a number", "0", LAUNCHER, "the rank on this node: its GPU; a rank where RANK is unset"
)
WORLD_SIZE = Setting("WORLD_SIZE", "a number", "1", LAUNCHER, "above 1: the process is one rank of a launch")
MASTER_PORT = Setting(
    "MASTER_PORT",
    "a port",
    "unset",
    f"{LAUNCHER}; {REPROKIT} in each script trial",
    "a script trial's own rendezvous port, pinned for the ranks it starts",
)
TORCHELASTIC_RUN_ID = Setting(
    "TORCHELASTIC_RUN_ID",
    "any",
    "unset",
    LAUNCHER,
    "set (torchrun): the launcher owns the rendezvous, so the trial's port is not pinned",
)
SLURM_JOB_NUM_NODES = Setting("SLURM_JOB_NUM_NODES", "a number", "1", LAUNCHER, "nodes of a SLURM trial's job")
SLURM_NNODES = Setting(
    "SLURM_NNODES", "a number", "1", LAUNCHER, "nodes of the job, where SLURM_JOB_NUM_NODES is unset"
)
SLURM_JOB_ID = Setting("SLURM_JOB_ID", "a number", "0", LAUNCHER, "the job: its rendezvous port")
SLURM_ARRAY_JOB_ID = Setting("SLURM_ARRAY_JOB_ID", "a number", "unset", LAUNCHER, "the array job, before SLURM_JOB_ID")
SLURM_ARRAY_TASK_ID = Setting("SLURM_ARRAY_TASK_ID", "a number", "0", LAUNCHER, "the array task: added to the port")
SLURM_JOB_NODELIST = Setting(
    "SLURM_JOB_NODELIST", "SLURM's node list", "localhost", LAUNCHER, "the job's first node hosts the rendezvous"
)
SLURM_NODEID = Setting("SLURM_NODEID", "a number", "0", LAUNCHER, "this node's rank in the job, and its log folder")
CUDA_VISIBLE_DEVICES = Setting(
    "CUDA_VISIBLE_DEVICES",
    "GPU ids, comma-separated",
    "every GPU nvidia-smi lists",
    f"{USER}; {REPROKIT} in each trial",
    "the GPUs trials may be pinned to; part of the key of the kept environment report",
)
CUDA_LAUNCH_BLOCKING = Setting(
    "CUDA_LAUNCH_BLOCKING",
    "0, 1",
    "unset",
    f"{USER}; {REPROKIT} in its launch-blocking trials",
    "1: a CUDA fault's signature names the kernel the traceback names (launches were synchronous)",
)
TORCH_LOGS = Setting(
    "TORCH_LOGS",
    "torch's log names",
    "unset",
    f"{USER}; {REPROKIT} in its torch-logs trials",
    "set: a forked trial sets torch's logging up again",
)
TORCH_TRACE = Setting(
    "TORCH_TRACE",
    "a folder",
    "unset",
    f"{USER}; {REPROKIT} in its torch-logs trials",
    "set: a forked trial sets torch's logging up again",
)
TORCH_BISECT_SUBSYSTEM = Setting(
    "TORCH_BISECT_SUBSYSTEM",
    "a subsystem",
    "unset",
    f"{REPROKIT} in its pass trials (the user's is dropped there; kept in the script's runs as written)",
    "set: a forked trial turns torch's compiler bisector on",
)
TORCH_BISECT_BACKEND = Setting(
    "TORCH_BISECT_BACKEND",
    "a backend",
    "unset",
    f"{REPROKIT} in its pass trials and the plain ladder's runs (the user's is dropped in trials; kept in the "
    "script's runs as written)",
    "set: a forked trial turns torch's compiler bisector on",
)
TORCHINDUCTOR_CACHE_DIR = Setting(
    "TORCHINDUCTOR_CACHE_DIR",
    "a folder",
    "`/tmp/torchinductor_$USER`",
    f"{USER}; {REPROKIT} in each trial",
    "replaced by `<inductor-cache>` in a pack; a rank's own folder under it with REPROKIT_CACHE_PER_RANK",
)
TRITON_CACHE_DIR = Setting(
    "TRITON_CACHE_DIR",
    "a folder",
    "`~/.triton`",
    f"{USER}; {REPROKIT} in each trial",
    "replaced by `<triton-cache>` in a pack",
)
XDG_CACHE_HOME = Setting(
    "XDG_CACHE_HOME", "a folder", "`~/.cache`", USER, "holds reprokit's cache; replaced by `<cache>` in a pack"
)
TMPDIR = Setting(
    "TMPDIR",
    "a folder",
    "`/tmp`",
    f"{USER}; {REPROKIT} in each trial",
    "each trial's temporary folder is made in it; replaced by `<tmp>` in a pack",
)
PYTHONPATH = Setting(
    "PYTHONPATH",
    "folders",
    "unset",
    f"{USER}; {REPROKIT} in each trial",
    "kept, after reprokit's own folder and its start-up hook",
)
PYTHONDONTWRITEBYTECODE = Setting(
    "PYTHONDONTWRITEBYTECODE",
    "any",
    "unset",
    USER,
    "set, with no PYTHONPYCACHEPREFIX and a torch without .pyc files: trials write bytecode under reprokit's cache",
)
PYTHONPYCACHEPREFIX = Setting(
    "PYTHONPYCACHEPREFIX",
    "a folder",
    "unset",
    f"{USER}; {REPROKIT} in trials",
    "set: trials keep it, and their bytecode is not moved under reprokit's cache",
)

SETTINGS = tuple(v for v in list(globals().values()) if isinstance(v, Setting))


def without_reprokit(env: Mapping[str, str], path_dirs: tuple[str, ...]) -> dict:
    """`env` as the user has it: no REPROKIT_* variable, and none of `path_dirs` (reprokit's own folders) on
    PYTHONPATH, which is unset when nothing else is left on it."""
    out = {k: v for k, v in env.items() if not k.startswith(PREFIX)}
    drop = {os.path.abspath(d) for d in path_dirs}
    path = [p for p in PYTHONPATH.get("", env=out).split(os.pathsep) if p and os.path.abspath(p) not in drop]
    if path:
        out[PYTHONPATH.name] = os.pathsep.join(path)
    else:
        out.pop(PYTHONPATH.name, None)
    return out


def table() -> str:
    """The markdown table of every setting, as docs/settings.md shows it."""
    rows = ["| variable | values | default | set by | meaning |", "|---|---|---|---|---|"]
    rows += [f"| `{s.name}` | {s.values} | {s.default} | {s.set_by} | {s.meaning} |" for s in SETTINGS]
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table(), end="")
