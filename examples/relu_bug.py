"""A small model whose compiled forward crashes: inductor's C++ codegen for relu is planted with a bug.

Run it plainly (`python examples/relu_bug.py`) to see the failure, or bisect it:
    reprokit bisect examples/relu_bug.py
"""
import torch

# PyTorch's own test hook: the C++ kernel for relu throws at run time.
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, 4 * dim)
        self.down = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.up(self.norm(x))
        h = torch.relu(h) * torch.sigmoid(h)
        return x + self.down(h)


model = torch.nn.Sequential(*[Block(32) for _ in range(3)])
x = torch.randn(8, 32)
compiled = torch.compile(model)
out = compiled(x)
print("output norm", out.norm().item())
