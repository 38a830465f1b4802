"""A chain of pointwise ops on a large tensor: inductor fuses it into one pass, eager makes twelve."""
import torch


def chain(x):
    for _ in range(6):
        x = torch.sin(x) * 1.01 + 0.1
    return x


compiled = torch.compile(chain)  # SITE
x = torch.randn(2_000_000)
for _ in range(8):
    compiled(x)
