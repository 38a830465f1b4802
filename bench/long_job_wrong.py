"""A long job with a late, silent failure (issue 46's benchmark): a compiled MLP trains for LONG_JOB_SECONDS (default
60), then a separately compiled evaluation computes wrong values in inductor's C++ relu kernel (planted with PyTorch's
own inject_relu_bug_TESTING_ONLY = "accuracy", set only before the evaluation compiles). Nothing raises: the job's own
check compares the evaluation with eager and exits 1."""

import os
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(model)
x, y = torch.randn(64, 256), torch.randn(64, 256)
deadline = time.monotonic() + float(os.environ.get("LONG_JOB_SECONDS", "60"))
steps = 0
while time.monotonic() < deadline:
    loss = torch.nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    steps += 1
print(f"trained {steps} steps, loss {loss.item():.4f}", flush=True)

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


@torch.compile
def evaluate(m, batch):
    with torch.no_grad():
        return torch.relu(m(batch)).mean()


batch = torch.randn(256, 256)
got = evaluate(model, batch)
with torch.no_grad():
    expected = torch.relu(model(batch)).mean()
print("eval", got.item(), "eager", expected.item())
if not torch.allclose(got, expected, rtol=1e-4, atol=1e-5):
    print("evaluation differs from eager", file=sys.stderr)
    sys.exit(1)
