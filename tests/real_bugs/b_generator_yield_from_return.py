# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "Dynamo error", "issue": 149037, "repro_kinds": ["source"], "max_lines": 60}
# pytorch/pytorch#149037 (fixed upstream by PR #185769, "Preserve generator return values in Dynamo"; the issue's own title was not in the stored threads)
# CLASS: Dynamo error
# WHY: Dynamo's inlined generators lose the sub-generator's `return` value: `out = yield from run_stage(...)` binds None instead of the stage output (SEND/YIELD_FROM drop StopIteration.value), so the next layer gets None and tracing raises even with backend="eager"
"""Tiny pyramid encoder: each stage is a generator that streams per-block
features to the caller and *returns* its final activation (PEP 380)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + F.gelu(self.fc(self.norm(x)))


def run_stage(blocks, x):
    """Yield every block's activation; return the stage output."""
    for blk in blocks:
        x = blk(x)
        yield x
    return x


def run_encoder(stages, downs, x):
    """Delegate to each stage; stage-level residual, then project down."""
    for stage, down in zip(stages, downs):
        out = yield from run_stage(stage, x)
        x = down(out + x)
    return x


class PyramidEncoder(nn.Module):
    def __init__(self, dims=(16, 32, 64), depth=2, classes=10):
        super().__init__()
        self.stages = nn.ModuleList(
            nn.ModuleList(Block(d) for _ in range(depth)) for d in dims)
        nxt = dims[1:] + (dims[-1],)
        self.downs = nn.ModuleList(nn.Linear(d, n) for d, n in zip(dims, nxt))
        self.head = nn.Linear(dims[-1] + sum(dims), classes)

    def forward(self, x):
        feats, it = [], run_encoder(self.stages, self.downs, x)
        while True:
            try:
                feats.append(next(it).mean(dim=1))
            except StopIteration as stop:
                final = stop.value
                break
        side = torch.cat(feats[1::2], dim=-1)
        return self.head(torch.cat([final.mean(dim=1), side], dim=-1))


model = PyramidEncoder().eval()
tokens = torch.randn(4, 8, 16)
with torch.no_grad():
    expected = model(tokens)
    compiled = torch.compile(model)
    actual = compiled(tokens)
torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
print("ok", tuple(actual.shape))
