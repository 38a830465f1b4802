"""A GPU job with a silent failure (issue 46 on the device): a compiled MLP trains on CUDA for a few seconds, then a
separately compiled evaluation computes wrong values in inductor's Triton relu kernel (PyTorch's own
triton.inject_relu_bug_TESTING_ONLY = "accuracy", set only before the evaluation compiles). Nothing raises: the job
compares the evaluation with eager and exits 1."""

import os
import sys
import time

import torch

torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(model)
x, y = torch.randn(64, 256, device=dev), torch.randn(64, 256, device=dev)
deadline = time.monotonic() + float(os.environ.get("JOB_SECONDS", "5"))
while time.monotonic() < deadline:
    loss = torch.nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"trained, loss {loss.item():.4f}", flush=True)

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"


@torch.compile
def evaluate(x):
    return torch.relu(model(x)) * 2


with torch.no_grad():
    got = evaluate(x)
    want = torch.relu(model(x)) * 2
if not torch.allclose(got, want, rtol=1e-3, atol=1e-3):
    print(f"evaluation differs from eager: max abs diff {(got - want).abs().max().item():.4g}", flush=True)
    sys.exit(1)
print("evaluation matches eager")
