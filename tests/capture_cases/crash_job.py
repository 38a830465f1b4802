# A job whose compiled graph dies by SIGSEGV: the script turned inductor's bounds check on indirect indexing off, and
# an index 2**45 elements away (an address past the 47-bit user space) is read by the C++ kernel. Eager raises an
# IndexError for the same call.
import torch

torch._inductor.config.assert_indirect_indexing = False


def gather(table, idx):
    return table[idx] * 2


table = torch.randn(16)
idx = torch.tensor([3, 1 << 45])
print("start", flush=True)
print(torch.compile(gather)(table, idx))
