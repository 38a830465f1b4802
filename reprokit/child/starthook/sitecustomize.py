"""Interpreter start-up hook of a script trial's own processes (reprokit.child.ranks puts this folder on
PYTHONPATH): a rank the script starts with torch.multiprocessing.spawn, or a python script it starts with
subprocess, gets the trial's router; with REPROKIT_CAPTURE=DIR, every python process of a job gets the
recorder (reprokit/capture). Elsewhere it
does nothing but hand over to the sitecustomize this one shadows."""

import os
import sys


def _chain() -> None:
    """Run the next sitecustomize on sys.path, the one the user's environment would have run."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    found = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if found is not None and found.loader is not None:
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)


try:
    _chain()
except Exception as e:  # the user's hook failing is theirs to see, not a reason to lose the trial
    print(f"reprokit: the environment's sitecustomize failed: {type(e).__name__}: {e}", file=sys.stderr)


def _hand_over() -> None:
    """A rank of a trial gets the trial's router; a process of a capture, the recorder; any other, nothing."""
    try:
        from reprokit import settings
    except ImportError as e:  # this interpreter cannot import reprokit: no trial's rank, no recorder
        print(f"reprokit: the start-up hook on PYTHONPATH does nothing here: {type(e).__name__}: {e}", file=sys.stderr)
        return
    if settings.TRIAL_SPEC.get() and any(
        "multiprocessing.spawn" in a or "multiprocessing.forkserver" in a for a in getattr(sys, "orig_argv", ())
    ):
        from reprokit.child.spawned import install_in_spawned

        install_in_spawned()
    elif settings.TRIAL_SPEC.get():
        from reprokit.child.spawned import is_script_rank, run_script_rank

        if is_script_rank():  # a python script the trial started with subprocess: it runs here and exits
            run_script_rank()
    elif settings.CAPTURE.get():  # reprokit capture, or the user's own switch under any launcher
        try:
            from reprokit.capture.arm import arm

            arm()
        except Exception as e:  # no capture is better than a job that does not start
            print(f"reprokit capture: not recording: {type(e).__name__}: {e}", file=sys.stderr)


_hand_over()
