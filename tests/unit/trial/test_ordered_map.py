"""trial.ordered_map: results in input order, items after a stop not started, an error stopping the rest."""

import threading
import time

import pytest

from reprokit.trial.ordered_map import ordered_map


def test_results_come_in_input_order_whatever_finishes_first():
    assert ordered_map(lambda n: time.sleep(n / 100) or n, [3, 1, 2, 0], width=4) == [3, 1, 2, 0]


def test_items_after_a_stop_are_not_started():
    started = []
    out = ordered_map(lambda n: started.append(n) or n, [1, 2, 3, 4], width=1, stop=lambda i, r: r == 2)
    assert out == [1, 2, None, None] and started == [1, 2]


def test_at_most_width_items_run_at_once():
    running, most, lock = [0], [0], threading.Lock()

    def call(n):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return n

    ordered_map(call, list(range(8)), width=3)
    assert most[0] <= 3


def test_an_error_aborts_and_is_raised():
    aborted = []

    def call(n):
        if n == 1:
            raise RuntimeError("trial setup failed")
        return n

    with pytest.raises(RuntimeError, match="trial setup failed"):
        ordered_map(call, [0, 1, 2], width=2, abort=lambda: aborted.append(True))
    assert aborted == [True]
