# Two DDP ranks the script spawns itself (mp.spawn, gloo, CPU): neither has RANK nor LOCAL_RANK, only the process
# group knows which is which. Each compiles its module, then wraps it (DDP's optimizer splits the graph at its
# buckets, and the compiler gets fake example inputs); inductor's C++ relu kernel is planted to fail to compile.
# Forward only (tests/dist_cases/ddp_spawn_relu.py says why).
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def step(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = os.environ.get("JOB_BUG", "compile_error")
    torch.manual_seed(0)
    # Three 1 MB weights, buckets of 1 MB (DDP's first bucket is 1 MB, and no bucket may be smaller): the graph is
    # split in three, and the relu is in the middle one.
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 1024), torch.nn.Tanh(), torch.nn.Linear(1024, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1024)
    )
    ddp = DDP(torch.compile(model), bucket_cap_mb=1)
    x = torch.randn(8, 256, generator=torch.Generator().manual_seed(rank))
    print(f"rank {rank}: {ddp(x).sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:  # a free port: other jobs on this machine may hold a fixed one
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    mp.spawn(step, args=(2,), nprocs=2)
