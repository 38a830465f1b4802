"""A chain of cheap pointwise ops on a tensor larger than the caches: inductor fuses it into one pass over memory,
eager makes eighteen (about 17x on 2 cores); the op is cheap, so memory, not arithmetic, sets the time."""
import torch


def chain(x):
    for _ in range(6):
        x = torch.relu(x) * 1.01 + 0.1
    return x


compiled = torch.compile(chain)  # SITE
x = torch.randn(4_000_000)
for _ in range(8):
    compiled(x)
