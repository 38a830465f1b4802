# mode="reduce-overhead" (CUDA graphs): the script keeps the output of one call across the next call, whose replay
# reuses that output's memory; reading it then raises. The calling pattern of PyTorch's own cudagraph-trees test
# (test_cudagraph_trees.py, test_error_on_dealloc_use). Every graph passes when run alone: the failure lives in how
# the script calls the compiled function, so its repro is the script cut down.
import torch
from _blocks import model

m = model().cuda()
step = torch.compile(m, mode="reduce-overhead")
x = torch.randn(64, 16, device="cuda")
with torch.no_grad():
    first = step(x)
    second = step(x + 1)
    print("difference", (second - first).abs().max().item())
