# A two-rank torchrun job (gloo, CPU) whose compiled graph dies by SIGSEGV in every rank: the script turned
# inductor's bounds check on indirect indexing off, and an index 2**45 elements away is read by the C++ kernel.
# The graph sums across ranks with a functional all-reduce first. Eager raises an IndexError for the same call.
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

torch._inductor.config.assert_indirect_indexing = False


def gather(table, idx):
    table = funcol.all_reduce(table, "sum", dist.group.WORLD)
    return table[idx] * 2


dist.init_process_group("gloo")
table = torch.randn(16, generator=torch.Generator().manual_seed(0))
idx = torch.tensor([3, 1 << 45])
print("start", dist.get_rank(), flush=True)
print(torch.compile(gather)(table, idx))
dist.destroy_process_group()
