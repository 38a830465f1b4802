# Two ranks (gloo) train compiled for 1 s; then rank 0's evaluation compile never ends (inductor's own test hook)
# while rank 1, its own compile done, waits for rank 0 in an all-reduce of the results.
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
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
print(f"rank {rank} trained: loss {loss.item():.3f}", flush=True)
if rank == 0:
    torch._inductor.config.sleep_sec_TESTING_ONLY = 10_000
with torch.no_grad():
    out = torch.compile(lambda x: model(x).sin() * 2)(torch.randn(4, 16))
print(f"rank {rank} evaluated", flush=True)
dist.all_reduce(out)
print(out)
dist.destroy_process_group()
