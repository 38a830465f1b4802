# A one-process job: a model compiled with inductor, whose C++ relu kernel is planted to raise at run time.
# JOB_MODE: the torch.compile mode it asks for (none by default).
import os

import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.up(x)
        h = torch.relu(h) * torch.sigmoid(h)
        return x + self.down(h)


torch.manual_seed(0)
print("training starts")
out = torch.compile(Block(16), mode=os.environ.get("JOB_MODE"))(torch.randn(4, 16))
print("never printed", out.shape)
