# A one-process evaluation compiled with inductor, whose C++ relu kernel is planted to compute wrong values; the
# job checks compiled against eager itself and exits 1, with no exception from torch.
# JOB_EXIT_ONLY=1: the job exits 1 for a reason of its own, outside the compiled graphs (nothing diverges), and
# compiles with aot_eager (quick: nothing of inductor's is needed to show that).
import os
import sys

import torch

EXIT_ONLY = os.environ.get("JOB_EXIT_ONLY") == "1"
if not EXIT_ONLY:
    torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


torch.manual_seed(0)
block = Block(16).eval()
x = torch.randn(4, 16)
with torch.no_grad():
    expected = block(x)
    actual = torch.compile(block, backend="aot_eager" if EXIT_ONLY else "inductor")(x)
if EXIT_ONLY:
    print("evaluation ends: a check of the job's own fails")
    sys.exit(1)
error = (expected - actual).abs().max().item()
print(f"compiled differs from eager by {error:.3g}")
sys.exit(1 if error > 1e-4 else 0)
