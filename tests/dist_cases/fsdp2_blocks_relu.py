# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "subsystem": "lowerings"}
# Two FSDP2 ranks the script spawns itself (mp.spawn, gloo, CPU), neither with RANK nor LOCAL_RANK: each block is
# compiled, then sharded (fully_shard, the order the FSDP2 docs give), and the root wrapped last. Only the second
# block calls relu, and inductor's relu lowering is planted to fail to compile: graph 1 fails, graph 0 does not.
# Forward only (ddp_spawn_relu.py says why).
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import fully_shard


class Block(torch.nn.Module):
    def __init__(self, dim, act):
        super().__init__()
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)
        self.act = act

    def forward(self, x):
        return x + self.down(self.act(self.up(x)))


def step(rank, world):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
    torch.manual_seed(0)
    model = torch.nn.Sequential(Block(16, torch.nn.Tanh()), Block(16, torch.nn.ReLU()))
    for block in model:
        block.compile()
        fully_shard(block)
    fully_shard(model)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(rank))
    print(f"rank {rank}: {model(x).sum().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    with socket.socket() as s:  # a free port: other jobs on this machine may hold a fixed one
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    mp.spawn(step, args=(2,), nprocs=2)
