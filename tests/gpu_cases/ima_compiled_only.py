# EXPECT = {"failing_stage": "eager", "last_passing_stage": "none"}
"""Planted: the script's own custom op runs a hand-written Triton kernel that stores far outside its buffer, and
the step calls it only while torch.compile traces (torch.compiler.is_compiling()): compiled, the step dies of an
illegal memory access; uncompiled, it does not. The kernel is launched from the op's Python body, not from
inductor's wrapper, so with CUDA_LAUNCH_BLOCKING=1 the traceback names no generated kernel; compute-sanitizer's
memcheck names scatter_far."""
import torch
import triton
import triton.language as tl


@triton.jit
def scatter_far(ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs + (1 << 40), tl.full([BLOCK], 1.0, tl.float32), mask=offs < n)


@torch.library.custom_op("reprokit_gpu::store_far", mutates_args=())
def store_far(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    scatter_far[(1,)](y, y.numel(), BLOCK=64)
    return y


@store_far.register_fake
def _(x):
    return torch.empty_like(x)


def step(x):
    y = x * 2
    if torch.compiler.is_compiling():
        y = store_far(y)
    return y


x = torch.zeros(64, device="cuda")
out = torch.compile(step)(x)
torch.cuda.synchronize()
torch.testing.assert_close(out, step(x))
print("ok")
