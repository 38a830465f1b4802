"""A compile past the trial's compile limit (spec.compile_limit, set once a trial of the bisect hung): every
thread's stack and a hang are written as the trial's result, and the trial ends there, instead of waiting out the
rest of its timeout (a job's steps before the hanging compile count against that timeout, not against this)."""

from __future__ import annotations

import faulthandler
import os
import threading
import time

from reprokit.data.rundir import write_json_atomic
from reprokit.data.signature import HANG

HUNG_EXIT = 124  # as `timeout` exits; the result.json written first is what the parent reads


def within(state, k: int, compile):
    """compile(), timed (state.longest_compile), and ended as a hang once it runs past spec.compile_limit."""
    limit = state.spec.compile_limit
    timer = threading.Timer(limit, _hung, (state, k, limit)) if limit else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    started = time.monotonic()
    try:
        compiled = compile()
    finally:
        if timer is not None:
            timer.cancel()
    state.longest_compile = max(state.longest_compile, round(time.monotonic() - started, 3))
    return compiled


def _hung(state, k: int, limit: float) -> None:
    """Graph k still compiles at the limit: its stacks, the hang as result.json, and the process ends at once
    (os._exit: the stuck compile holds the main thread)."""
    stacks = os.path.join(state.dir, "stacks.txt")
    with open(stacks, "a") as f:
        faulthandler.dump_traceback(file=f, all_threads=True)
    with open(stacks, errors="replace") as f:
        text = f.read()
    result = state.state()
    result.update(
        kind="hang",
        signature=HANG.to_dict(),
        traceback=text[-20000:],
        note=f"graph {k} still compiling after {limit:g} s, the compile limit the first trial that hung set",
    )
    write_json_atomic(os.path.join(state.dir, "result.json"), result)
    os._exit(HUNG_EXIT)
