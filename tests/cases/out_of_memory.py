# EXPECT = {"exit_code": 3}
"""Compiles fine, then asks the allocator for a petabyte: an out-of-memory says nothing about the compiler."""
import torch


@torch.compile
def f(x):
    return torch.sin(x) + 1


f(torch.randn(8))
huge = torch.empty(2 ** 50, dtype=torch.uint8)
