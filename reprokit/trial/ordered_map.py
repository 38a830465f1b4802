"""An ordered parallel map that can stop early: results in input order, later items skipped once told to stop."""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(
    call: Callable[[T], R],
    items: Sequence[T],
    width: int,
    stop: Callable[[int, R], bool] | None = None,
    abort: Callable[[], None] | None = None,
) -> list:
    """call() over items, up to `width` at a time; results in order. Once stop(i, result) is true for the i-th
    item, items after i that have not started are skipped (None). On Ctrl-C or an error no further item starts and
    abort() is called before the running ones are waited for (a cluster's jobs are cancelled, not waited out)."""
    items = list(items)
    results: list = [None] * len(items)
    if width <= 1 or len(items) <= 1:
        for i, item in enumerate(items):
            results[i] = call(item)
            if stop and stop(i, results[i]):
                break
        return results
    finished = [False] * len(items)
    state = {"next": 0, "halted": False}
    lock = threading.Lock()

    def one(i):
        # stop() is asked in item order, by the worker that completes the order, before that worker takes
        # another item: an item not started when it says stop is never started.
        with lock:
            if state["halted"]:
                return
        result = call(items[i])
        with lock:
            results[i], finished[i] = result, True
            while not state["halted"] and state["next"] < len(items) and finished[state["next"]]:
                j = state["next"]
                state["next"] += 1
                if stop and stop(j, results[j]):
                    state["halted"] = True

    with cf.ThreadPoolExecutor(max_workers=width) as pool:
        try:
            for fut in [pool.submit(one, i) for i in range(len(items))]:
                fut.result()
        except BaseException:
            with lock:
                state["halted"] = True
            if abort:
                abort()
            raise
    return results
