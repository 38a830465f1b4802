# Two ranks the script spawns itself; each compiles with the planted relu lowering bug (C++ compile error). Without
# compile, rank 0 finishes its work and then never exits, as torch 2.13's gloo teardown does 1 run in 5 after a
# DDP backward (here deterministic: an exit hook that waits forever, only in the no-compile run).
import atexit
import os
import threading

import torch
import torch.multiprocessing as mp


def step(rank):
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
    f = torch.compile(lambda x: torch.relu(x) + 1)
    print(rank, f(torch.randn(8)))
    if rank == 0 and os.environ.get("TORCHDYNAMO_DISABLE") == "1":
        atexit.register(threading.Event().wait)


if __name__ == "__main__":
    mp.spawn(step, nprocs=2)
