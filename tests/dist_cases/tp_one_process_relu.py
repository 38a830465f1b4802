# The tensor-parallel block of tp_torchrun_relu.py in one process (world size 1, no launcher): the baseline for
# the time to verdict of its two-rank run.
import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


class ParallelMLP(torch.nn.Module):
    def __init__(self, dim, hidden, world):
        super().__init__()
        self.up = torch.nn.Linear(dim, hidden // world)
        self.down = torch.nn.Linear(hidden // world, dim, bias=False)

    def forward(self, x):
        partial = self.down(torch.relu(self.up(x)))
        return funcol.all_reduce(partial, "sum", dist.group.WORLD)


os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29534")
dist.init_process_group("gloo", rank=0, world_size=1)
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
torch.manual_seed(dist.get_rank())
block = ParallelMLP(16, 64, dist.get_world_size())
x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
expected = block(x)
actual = torch.compile(block)(x)
assert torch.allclose(expected, actual, atol=1e-4), f"rank {dist.get_rank()}: compiled differs"
dist.destroy_process_group()
