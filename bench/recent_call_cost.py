"""The per-call cost of keeping each compiled graph's latest call (capture/recent_call.py) on a job that passes:
RecentCalls.before and after around a call, timed alone, for graphs of 4, 32 and 256 tensor inputs (a block's
parameters), under the input cap (references) and over it (weak references). Run: python bench/recent_call_cost.py"""

import time

import torch

from reprokit.capture.recent_call import RecentCalls


def per_call_us(n_inputs: int, cap: int, calls: int = 20000) -> float:
    # parameters, then the activation: as Dynamo passes a block's inputs
    args = tuple(torch.nn.Parameter(torch.randn(16, 16)) for _ in range(n_inputs - 1)) + (torch.randn(16, 16),)
    out = [torch.randn(16, 16)]
    gm = torch.fx.symbolic_trace(lambda *xs: (xs[0],))
    rc = RecentCalls(cap)
    rc.compiled(0, gm, args, None, {"backend": "inductor"})
    rc.before(0, args)  # the first call: copied, then decided
    rc.after(0, out)
    started = time.perf_counter()
    for _ in range(calls):
        rc.before(0, args)
        rc.after(0, out)
    return (time.perf_counter() - started) / calls * 1e6


def call_pair_us(calls: int = 20000) -> float:
    """Two empty method calls, the floor on this machine now."""

    class Empty:
        def before(self, k, args):
            pass

        def after(self, k, out):
            pass

    e, args, started = Empty(), (1,), time.perf_counter()
    for _ in range(calls):
        e.before(0, args)
        e.after(0, args)
    return (time.perf_counter() - started) / calls * 1e6


print(f"two empty method calls: {call_pair_us():.2f} us")
for n in (4, 32, 256):
    under, over = per_call_us(n, 64 << 20), per_call_us(n, 0)
    print(f"{n:4d} inputs: {under:6.2f} us per call under the cap (references), {over:6.2f} us over it (weak)")
