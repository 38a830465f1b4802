# A tensor-parallel MLP block under torchrun on one GPU per rank (NCCL): the row-parallel output is summed by a
# functional all-reduce inside the compiled graph. Inductor's Triton relu lowering bug (accuracy) is planted with
# PyTorch's own hook; the script checks the compiled block against eager. RELU_BUG=compile_error plants the
# hook's compile error instead (a failure inside the backend, as `reprokit capture` records it).
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


torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = os.environ.get("RELU_BUG", "accuracy")
torch.manual_seed(dist.get_rank())
block = ParallelMLP(16, 64, dist.get_world_size()).cuda()
x = torch.randn(8, 16, generator=torch.Generator().manual_seed(0)).cuda()
expected = block(x)
actual = torch.compile(block)(x)
torch.cuda.synchronize()
assert torch.allclose(expected, actual, atol=1e-4), f"rank {dist.get_rank()}: compiled differs"
dist.destroy_process_group()
