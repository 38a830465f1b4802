# EXPECT = {"failing_stage": "export", "last_passing_stage": "none", "issue": 181097, "guard": "x.size()[0] // 5 != 1"}
"""pytorch/pytorch#181097: export adds the guard `x.size()[0] // 5 != 1` when one input's dim is a multiple of
another's (x: 5 * batch, y: batch, batch in [1, 8]), so the exported program rejects batch 1, which the model
supports: ep.module() raises "Guard failed: x.size()[0] // 5 != 1"; eager runs it. The guard's `//` is what the
finding is about, so the report must quote it whole."""
import torch
from torch.export import Dim, export


class MyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = 5

    def forward(self, x, y):
        x1 = x.view(self.c, -1)
        return [x1[i] - y for i in range(self.c)]


m = MyModel()
batch = Dim("batch", min=1, max=8)
ep = export(m, (torch.randn(5 * 4), torch.randn(4)), dynamic_shapes={"x": {0: batch * 5}, "y": {0: batch}})
print(ep.module()(torch.randn(10), torch.randn(2))[0].shape)  # batch 2: passes
print(ep.module()(torch.randn(5), torch.randn(1))[0].shape)  # batch 1: in the declared range, rejected
