# EXPECT = {"failing_stage": "eager", "kinds": ["crash"], "exc_type": "SIGSEGV"}
"""The process dies while Dynamo traces: a custom op's fake kernel, which only tracing calls, raises SIGSEGV when
torch.compiler.is_compiling() is true. Eager calls the real kernel only. No graph ever reaches a backend."""
import os
import signal

import torch


@torch.library.custom_op("rk::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    if torch.compiler.is_compiling():
        os.kill(os.getpid(), signal.SIGSEGV)
    return torch.empty_like(x)


@torch.compile
def f(x):
    return twice(x).cos() + 1


print(f(torch.randn(4)))
