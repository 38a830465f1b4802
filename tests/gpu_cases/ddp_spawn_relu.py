# Issue 48: a DDP job that spawns its own ranks (mp.spawn; neither RANK nor LOCAL_RANK is set in them), one GPU per
# rank over NCCL, or gloo on CPU where there is no GPU (the check on CPU). The module is compiled, then wrapped:
# DDP's optimizer splits the graph at its buckets and compiles each bucket's graph on fake inputs. Three 1 MB
# weights in buckets of 1 MB (DDP's first bucket is 1 MB, and no bucket may be smaller): three graphs, the relu in
# the middle one. Inductor's relu lowering is planted (Triton's on GPU, C++'s on CPU) with PyTorch's own hook;
# RELU_BUG: compile_error (default), runtime_error or accuracy. Forward only (tests/dist_cases/ddp_spawn_relu.py
# says why).
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

CUDA = torch.cuda.is_available() and torch.cuda.device_count() >= 2


def step(rank, world):
    device = torch.device("cuda", rank) if CUDA else torch.device("cpu")
    if CUDA:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if CUDA else "gloo", rank=rank, world_size=world)
    lowering = torch._inductor.config.triton if CUDA else torch._inductor.config.cpp
    lowering.inject_relu_bug_TESTING_ONLY = os.environ.get("RELU_BUG", "compile_error")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 1024),
        torch.nn.Tanh(),
        torch.nn.Linear(1024, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 1024),
    ).to(device)
    ddp = DDP(torch.compile(model), bucket_cap_mb=1, device_ids=[rank] if CUDA else None)
    x = torch.randn(8, 256, generator=torch.Generator().manual_seed(rank)).to(device)
    expected, actual = model(x), ddp(x)
    assert torch.allclose(expected, actual, atol=1e-4), f"rank {rank}: compiled differs from eager"
    print(f"rank {rank}: {actual.sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:  # a free port: other jobs on this machine may hold a fixed one
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    mp.spawn(step, args=(2,), nprocs=2)
