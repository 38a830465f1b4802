# A two-rank tensor-parallel MLP under torchrun (gloo, CPU): the row-parallel output is summed by a functional
# all-reduce inside the compiled graph, and inductor's C++ relu kernel is planted to raise at run time.
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
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
torch.manual_seed(dist.get_rank())
block = ParallelMLP(16, 64, dist.get_world_size())
x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0))
out = torch.compile(block)(x)
dist.destroy_process_group()
