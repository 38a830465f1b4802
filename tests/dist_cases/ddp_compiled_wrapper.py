# torch.compile(DDP(model)): Dynamo skips DDP's forward, so nothing reaches the compiler and every step runs
# eager. The fix is to compile the module, then wrap it: DDP(torch.compile(model)).
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", rank=0, world_size=1)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
step = torch.compile(DDP(model))
for _ in range(4):
    step(torch.randn(8, 16)).sum().backward()
dist.destroy_process_group()
