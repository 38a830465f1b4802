# A two-rank tensor-parallel MLP under torchrun (gloo, CPU): the row-parallel output is summed by a functional
# all-reduce inside the compiled graph, and inductor's C++ relu kernel is planted to compute wrong values. The job
# checks compiled against eager itself and exits 1, with no exception from torch.
import sys

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


dist.init_process_group("gloo")
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
torch.manual_seed(dist.get_rank())
block = ParallelMLP(16, 64, dist.get_world_size())
x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    expected = block(x)
    actual = torch.compile(block)(x)
dist.destroy_process_group()
error = (expected - actual).abs().max().item()
print(f"compiled differs from eager by {error:.3g}")
sys.exit(1 if error > 1e-4 else 0)
