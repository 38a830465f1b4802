"""A process the script spawned, made a rank of the trial: the start-up hook in child/starthook runs in every
process spawned from the trial process and, in one multiprocessing started, wraps the process's target: rank i
answers in TRIAL_DIR/rank<i>/ (result.json, state.json, stacks.txt) as a trial process of its own does.
"""

from __future__ import annotations

import atexit
import faulthandler
import os
import runpy
import sys
import time
import traceback

from reprokit import settings
from reprokit.data.rundir import private_opener


def is_script_rank() -> bool:
    """A python script (not torch's compile workers, nothing installed) that the trial process started itself."""
    script = sys.argv[0] if sys.argv else ""
    if settings.TRIAL_PID.get() != str(os.getppid()) or not script.endswith(".py") or not os.path.isfile(script):
        return False
    import importlib.util
    import sysconfig

    torch_spec = importlib.util.find_spec("torch")
    installed = [sysconfig.get_paths()[k] for k in ("stdlib", "purelib", "platlib")] + [
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ]  # reprokit's own package
    if torch_spec is not None and torch_spec.origin:
        installed.append(os.path.dirname(torch_spec.origin))
    path = os.path.abspath(script)
    return not any(path.startswith(os.path.abspath(d) + os.sep) for d in installed)


def install_in_spawned() -> None:
    """In a process multiprocessing spawned: the process's target runs as a rank of the trial. torch's spawn
    entry (fn, i, args, ...) is rank i; a plain multiprocessing target is numbered by its process identity."""
    import multiprocessing.process as mpp

    if settings.TRIAL_PID.get() != str(os.getppid()):
        return

    original_run = mpp.BaseProcess.run

    def run(self):
        target, args = self._target, tuple(self._args)
        if getattr(target, "__module__", "") == "torch.multiprocessing.spawn" and len(args) >= 3:
            self._args = (_rank_function(args[0], args[1]), *args[1:])
        elif target is not None:
            self._target = _rank_function(target, (self._identity or (1,))[-1] - 1)
        return original_run(self)

    mpp.BaseProcess.run = run  # type: ignore[method-assign]  # every process the script starts, watched


def run_script_rank() -> None:
    """In a python script the trial process started itself (subprocess): the script runs here, as a rank of the
    trial, and the process ends when it does. Rank i: the RANK the script gave it, else the next free number."""
    script = sys.argv[0]
    root = settings.TRIAL_DIR.required()
    rank = settings.RANK.get() or settings.LOCAL_RANK.get()
    i = int(rank) if rank and rank.isdigit() else _next_free_rank(root)

    def run_path():
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")

    code = 0
    try:
        _rank_function(run_path, i)()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    # As the interpreter would end, without waiting on threads it left running (a failed rank's teardown).
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _next_free_rank(root: str) -> int:
    i = 0
    while True:
        try:
            os.makedirs(root, exist_ok=True)
            os.mkdir(os.path.join(root, f"rank{i}"))
            return i
        except FileExistsError:
            i += 1


def _rank_function(fn, i: int):
    from reprokit.child.classify import classify_exception, classify_exit, passed
    from reprokit.child.comparisons import install as install_comparisons
    from reprokit.child.main import arm_faulthandler, read_spec, write_result
    from reprokit.child.probe import install_probe
    from reprokit.child.router import install_router
    from reprokit.child.state import TrialState

    spec, root = read_spec(settings.TRIAL_SPEC.required(), settings.TRIAL_DIR.required())
    rank_dir = os.path.join(root, f"rank{i}")
    os.makedirs(rank_dir, exist_ok=True)
    arm_faulthandler(rank_dir)
    state = TrialState(spec, rank_dir)
    install_probe(state)
    install_comparisons()
    install_router(state)
    pin_rendezvous_port()

    def run_rank(*args):
        started = time.monotonic()
        try:
            fn(*args)
        except SystemExit as e:
            write_result(state, None, classify_exit(state, e)[0], started, None)
            raise
        except BaseException as e:
            result = classify_exception(state, e)
            result["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-20000:]
            write_result(state, None, result, started, None)
            bound_teardown(rank_dir)
            raise
        # A numeric mismatch the router found is recorded, not raised: the script goes on as it would have.
        result = classify_exception(state, Exception()) if state.accuracy_failure else passed()
        write_result(state, None, result, started, None)

    return run_rank


# Seconds a failed rank may take to exit once its answer is written.
TEARDOWN_SECONDS = 10.0


def bound_teardown(rank_dir: str) -> None:
    """A failed rank's exit may wait forever on a peer that still runs (the process group's teardown, the store
    rank 0 hosts, a collective the peer is in), while the peer waits for it in destroy_process_group or a barrier;
    mp.spawn's parent stops the other ranks only once a failed one has exited. After TEARDOWN_SECONDS its stacks
    go to teardown_stacks.txt and it exits (faulthandler's watchdog runs even in the interpreter's finalisation)."""
    stacks = open(os.path.join(rank_dir, "teardown_stacks.txt"), "w", opener=private_opener)
    faulthandler.dump_traceback_later(TEARDOWN_SECONDS, exit=True, file=stacks)


def pin_rendezvous_port() -> None:
    """init_process_group meets at the trial's own port, whatever port the script wrote: trials running side by
    side would otherwise meet at one port and fail with EADDRINUSE."""
    port = settings.MASTER_PORT_PINNED.get()
    if not port:
        return
    import torch.distributed as dist

    original = dist.init_process_group

    def init_process_group(*args, **kwargs):
        method = kwargs.get("init_method")
        if method and method.startswith("tcp://"):
            kwargs["init_method"] = method.rsplit(":", 1)[0] + ":" + port
        else:
            os.environ[settings.MASTER_PORT.name] = port
        return original(*args, **kwargs)

    dist.init_process_group = init_process_group
