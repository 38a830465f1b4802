# Compiles and runs, then asks the GPU for 64 TiB: an out-of-memory is a skip, not the compiler's bug.
import torch


@torch.compile
def f(x):
    return torch.sin(x) + 1


f(torch.randn(8, device="cuda"))
huge = torch.empty(2 ** 46, dtype=torch.uint8, device="cuda")
