"""Recompilations: a Python number that changes every call, and shapes that change under dynamic=False."""
import torch


def scaled(x, n):  # RECOMPILE: scalar
    return x * n + 1


def shaped(x):  # RECOMPILE: shape
    return torch.relu(x) + x.mean()


compiled_scaled = torch.compile(scaled)
for n in range(4):
    compiled_scaled(torch.randn(8), n)

compiled_shaped = torch.compile(shaped, dynamic=False)
for width in range(5, 17):
    compiled_shaped(torch.randn(4, width))
