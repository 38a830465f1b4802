# EXPECT = {"kinds": ["out_of_memory"], "failing_stage": "aot_eager"}
"""Fits eager, not compiled: the script caps its address space 300 MiB above what it holds once its 512 MiB input
exists. Eager's in-place cumsum_ needs nothing more; compiled, AOT autograd's functionalization computes it out of
place into a new 512 MiB buffer, and the allocation fails ("can't allocate memory")."""
import resource

import torch


def address_space() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))


@torch.compile
def running_total(x):
    x.cumsum_(0)
    return x[-4:].sum()


x = torch.ones(128 << 20)  # 512 MiB
resource.setrlimit(resource.RLIMIT_AS, (address_space() + (300 << 20), resource.RLIM_INFINITY))
print(running_total(x))
