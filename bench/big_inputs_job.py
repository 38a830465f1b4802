"""A job whose failing graph takes BIG_INPUT_GIB (default 1) GiB of inputs (issue 48's capture-cost benchmark): a
compiled step runs BIG_INPUT_STEPS times (default 3) over the activations, then a separately compiled evaluation of
them fails in inductor's relu kernel (planted with PyTorch's own inject_relu_bug_TESTING_ONLY: the C++ kernel's on
the CPU, the Triton kernel's on CUDA). BIG_INPUT_DEVICE: cuda where there is one, else cpu."""

import os
import time

import torch

device = os.environ.get("BIG_INPUT_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
gib = float(os.environ.get("BIG_INPUT_GIB", "1"))
torch.manual_seed(0)
acts = torch.randn(int(gib * 2**30) // (4 * 4096), 4096, device=device)  # the activations, float32
ids = torch.randint(0, acts.shape[0], (2048,), device=device)  # the rows evaluated: an index, kept exactly
scale = torch.rand(4096, device=device)


@torch.compile
def step(a, s):
    return (a * s).sum(dim=1)


started = time.monotonic()
for _ in range(int(os.environ.get("BIG_INPUT_STEPS", "3"))):
    total = step(acts, scale)
print(
    f"{acts.numel() * 4 / 2**30:.2f} GiB of activations on {device}, steps {time.monotonic() - started:.1f} s",
    flush=True,
)

kernels = torch._inductor.config.cpp if device == "cpu" else torch._inductor.config.triton
kernels.inject_relu_bug_TESTING_ONLY = "compile_error"


@torch.compile
def evaluate(a, i, s):
    return torch.relu(a[i] * s + a.mean()).mean()


print("eval", evaluate(acts, ids, scale).item())
