# A job with 60 s of compiled training steps (a real run-up: a hang a minute in), then an evaluation compile that
# never ends (inductor's own sleep hook, as a compile that hangs would). Seconds of steps: argv[1], default 60.
import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 64), torch.nn.Tanh())
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
step = torch.compile(lambda x: (model(x) - x).square().mean())
started, steps = time.monotonic(), 0
while time.monotonic() - started < seconds:
    loss = step(torch.randn(32, 64))
    loss.backward()
    opt.step()
    opt.zero_grad()
    steps += 1
print(f"trained {steps} steps in {time.monotonic() - started:.0f} s: loss {loss.item():.4f}", flush=True)
torch._inductor.config.sleep_sec_TESTING_ONLY = 10_000
x = torch.randn(16, 64)
with torch.no_grad():
    print(torch.compile(lambda x: model(x).sin() * 2)(x))
