"""A GPU job whose evaluation compile never ends (issue 47 on the device): three layers trained compiled on CUDA for
1 s, then inductor's own sleep_sec_TESTING_ONLY makes the next graph's compile (its Triton kernels) sleep far past
any limit, as a compile that hangs would."""

import time

import torch

torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16), torch.nn.Tanh()).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = torch.compile(lambda x: model(x).square().mean())
started = time.monotonic()
while time.monotonic() - started < 1.0:
    loss = step(torch.randn(8, 16, device=dev))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"trained: loss {loss.item():.3f}", flush=True)
torch._inductor.config.sleep_sec_TESTING_ONLY = 10_000
x = torch.randn(4, 16, device=dev)
with torch.no_grad():
    out = torch.compile(lambda x: model(x).sin() * 2)(x)
    print("matches eager:", torch.allclose(out, model(x).sin() * 2))
