# EXPECT = {"failing_stage": "eager", "kinds": ["hang"], "timeout": 20}
"""Dynamo's tracing never ends: a helper spins while torch.compiler.is_compiling() is true, which it is only while
Dynamo traces it; eager runs it once and goes on. No graph ever reaches a backend."""
import torch


def helper(x):
    while torch.compiler.is_compiling():
        x = x + 1
    return x


@torch.compile
def f(x):
    return helper(x).sin()


print(f(torch.randn(4)))
