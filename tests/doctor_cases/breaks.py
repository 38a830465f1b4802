"""Three graph breaks a user writes by accident: a print, a data-dependent if, and .item()."""
import torch


def step(x):
    y = torch.sin(x) * 2
    print("step")  # BREAK: print
    if y.sum() > 0:  # BREAK: if
        y = y + 1
    scale = y.abs().max().item()  # BREAK: item
    return y / scale


compiled = torch.compile(step)
x = torch.randn(64, 64)
for _ in range(6):
    compiled(x)
