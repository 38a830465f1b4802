# EXPECT = {"failing_stage": "export", "last_passing_stage": "none", "line": "export_dim_constraint.py:18"}
"""torch.export with a dynamic batch whose declared range the model does not support: forward branches on the
batch size, export specializes it to one side, and the Dim range (2..64) is violated (a constraint violation)."""
import torch
from torch.export import Dim


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = self.fc(x)
        # the guard export adds on the batch: only batches up to 16 take this path
        scale = 2.0
        h = h * scale
        if x.shape[0] > 16:
            return h.mean(0, keepdim=True)
        return torch.relu(h)


model = Head().eval()
x = torch.randn(6, 8)
batch = Dim("batch", min=2, max=64)
ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
print(ep.module()(x).shape)
