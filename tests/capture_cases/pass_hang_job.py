# A training job whose evaluation compile never ends: trained compiled for 1 s, then a custom post-grad pass of
# the job's own that loops forever hangs the next graph's compile.
import time

import torch


def spin(graph):
    n = 0
    while True:  # a pass whose fixed point never comes
        n += 1


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16), torch.nn.Tanh())
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step = torch.compile(lambda x: model(x).square().mean())
started = time.monotonic()
while time.monotonic() - started < 1.0:
    loss = step(torch.randn(8, 16))
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"trained: loss {loss.item():.3f}", flush=True)
torch._inductor.config.post_grad_custom_post_pass = spin
with torch.no_grad():
    print(torch.compile(lambda x: model(x).sin() * 2)(torch.randn(4, 16)))
