"""A long job with a late failure (issue #30's benchmark): a compiled MLP trains for LONG_JOB_SECONDS (default 60),
then a separately compiled evaluation fails in inductor's relu kernel (planted with PyTorch's own
inject_relu_bug_TESTING_ONLY, set only before the evaluation compiles, as a late config change would be): the C++
kernel's on the CPU, the Triton kernel's with LONG_JOB_DEVICE=cuda (issue 48's long GPU job)."""

import os
import time

import torch

torch.manual_seed(0)
device = os.environ.get("LONG_JOB_DEVICE", "cpu")
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).to(device)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(model)
x, y = torch.randn(64, 256, device=device), torch.randn(64, 256, device=device)
deadline = time.monotonic() + float(os.environ.get("LONG_JOB_SECONDS", "60"))
steps = 0
while time.monotonic() < deadline:
    loss = torch.nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    steps += 1
print(f"trained {steps} steps, loss {loss.item():.4f}", flush=True)

kernels = torch._inductor.config.cpp if device == "cpu" else torch._inductor.config.triton
kernels.inject_relu_bug_TESTING_ONLY = "compile_error"


@torch.compile
def evaluate(m, batch):
    with torch.no_grad():
        return torch.relu(m(batch)).mean()


print("eval", evaluate(model, torch.randn(256, 256, device=device)).item())
