# A hand-written Triton kernel called from compiled code stores far outside its buffer: an illegal memory access.
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_far(ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs + (1 << 40), tl.full([BLOCK], 1.0, tl.float32), mask=offs < n)


@torch.compile
def step(x):
    y = x * 2
    scatter_far[(1,)](y, y.numel(), BLOCK=64)
    return y


out = step(torch.zeros(64, device="cuda"))
torch.cuda.synchronize()
print(out.sum().item())
