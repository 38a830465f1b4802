"""A process the script spawned, made a rank of the trial: the start-up hook in child/starthook runs in every
process spawned from the trial process and, in one multiprocessing started, wraps the process's target: rank i
answers in TRIAL_DIR/rank<i>/ (result.json, state.json, stacks.txt) as a trial process of its own does.
"""
from __future__ import annotations

import os
import time
import traceback

from reprokit.child.ranks import DIR_VAR, PID_VAR, PORT_VAR, SPEC_VAR


def install_in_spawned() -> None:
    """In a process multiprocessing spawned: the process's target runs as a rank of the trial. torch's spawn
    entry (fn, i, args, ...) is rank i; a plain multiprocessing target is numbered by its process identity."""
    import multiprocessing.process as mpp

    if os.environ.get(PID_VAR) != str(os.getppid()):
        return

    original_run = mpp.BaseProcess.run

    def run(self):
        target, args = self._target, tuple(self._args)
        if getattr(target, "__module__", "") == "torch.multiprocessing.spawn" and len(args) >= 3:
            self._args = (_rank_function(args[0], args[1]), *args[1:])
        elif target is not None:
            self._target = _rank_function(target, (self._identity or (1,))[-1] - 1)
        return original_run(self)

    mpp.BaseProcess.run = run


def _rank_function(fn, i: int):
    from reprokit.child.classify import classify_exception, classify_exit, passed
    from reprokit.child.main import arm_faulthandler, read_spec, write_result
    from reprokit.child.probe import install_probe
    from reprokit.child.router import install_router
    from reprokit.child.state import TrialState

    spec, root = read_spec(os.environ[SPEC_VAR], os.environ[DIR_VAR])
    rank_dir = os.path.join(root, f"rank{i}")
    os.makedirs(rank_dir, exist_ok=True)
    arm_faulthandler(rank_dir)
    state = TrialState(spec, rank_dir)
    install_probe(state)
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
            raise
        # A numeric mismatch the router found is recorded, not raised: the script goes on as it would have.
        result = classify_exception(state, Exception()) if state.accuracy_failure else passed()
        write_result(state, None, result, started, None)

    return run_rank


def pin_rendezvous_port() -> None:
    """init_process_group meets at the trial's own port, whatever port the script wrote: trials running side by
    side would otherwise meet at one port and fail with EADDRINUSE."""
    port = os.environ.get(PORT_VAR)
    if not port:
        return
    import torch.distributed as dist

    original = dist.init_process_group

    def init_process_group(*args, **kwargs):
        method = kwargs.get("init_method")
        if method and method.startswith("tcp://"):
            kwargs["init_method"] = method.rsplit(":", 1)[0] + ":" + port
        else:
            os.environ["MASTER_PORT"] = port
        return original(*args, **kwargs)

    dist.init_process_group = init_process_group
