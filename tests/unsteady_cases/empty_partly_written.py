# Returns a torch.empty buffer only half of which it writes (pytorch/pytorch#93437): eager's other half is whatever
# memory it got, compiled's other garbage. With --check-accuracy that is no accuracy bug: nothing to isolate.
import torch


def f(x):
    scratch = x * 3 + 1  # freed before the empty below: eager's empty reuses its memory, garbage that is not NaN
    total = scratch.sum()
    out = torch.empty(2 * x.numel())
    out.narrow(0, 0, x.numel()).copy_(x.sin() + total * 0)
    return out


print(torch.compile(f)(torch.randn(256))[:4])
