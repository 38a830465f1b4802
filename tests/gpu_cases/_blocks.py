"""A small residual MLP used by several cases (a local module: packs must include it)."""
import torch


class Block(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.up = torch.nn.Linear(dim, 2 * dim)
        self.down = torch.nn.Linear(2 * dim, dim)

    def forward(self, x):
        h = self.up(self.norm(x))
        h = torch.relu(h) * torch.sigmoid(h)
        return x + self.down(h)


def model(depth=5, dim=16):
    torch.manual_seed(0)
    return torch.nn.Sequential(*[Block(dim) for _ in range(depth)])
