# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "multi-rank, teardown", "issue": 190489, "repro_kinds": ["graph"], "max_nodes": 4, "max_lines": 20}
# pytorch/pytorch#190489: ranks that return without destroy_process_group() tear ProcessGroupGloo down during
# interpreter finalization, where a Gloo worker thread still holding tensors takes the GIL ("terminate called
# without an active exception", SIGABRT: PR #179291); with pytorch/pytorch#193263 compiled in each rank.
# CLASS: multi-rank, teardown
# WHY: each of two mp.spawn ranks over gloo runs a DDP-style step, then a compiled scalar cumsum (#193263: inductor's
# scan lowering indexes the empty size tuple, IndexError); the ranks exit without destroy_process_group(), as in
# #190489, so the plain run (compile off) now and then dies at teardown, after its work: about 1 run in 8 on torch
# 2.13 CPU (3 of 25), by SIGABRT, where the reports saw a hang. That is not the failure, and the verdict stays
# inductor.
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def running_total(x):
    bias = torch.tensor(5.0).cumsum(0)  # #193263: a 0-dim cumsum in the graph
    return x + bias


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)
    w = torch.nn.Linear(8, 1)
    w(torch.randn(4, 8)).sum().backward()
    grad = w.weight.grad.clone()
    dist.all_reduce(grad)
    x = torch.randn(4) + grad.mean()
    torch.testing.assert_close(torch.compile(running_total)(x), running_total(x))
    print(f"rank {rank} ok", flush=True)
    # no destroy_process_group(): the group is torn down as the interpreter exits (#190489)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    mp.spawn(worker, args=(2,), nprocs=2, join=True)
