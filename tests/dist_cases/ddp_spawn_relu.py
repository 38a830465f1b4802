# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "subsystem": "lowerings"}
# Two DDP ranks started by the script itself (mp.spawn, gloo, a fixed port); each compiles its module and
# plants inductor's relu lowering bug (compile error). Forward only: after a backward, torch 2.13's gloo can
# deadlock at teardown (~ProcessGroupGloo joins its run-loop thread holding the GIL while that thread frees an
# all-reduce whose saved thread state holds the backward's context, a Python object that needs the GIL); eager
# stages then hung at random, one CI run for 30 minutes.
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def step(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29531"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    ddp = DDP(torch.compile(model))
    ddp(torch.randn(8, 16)).sum()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(step, args=(2,), nprocs=2)
