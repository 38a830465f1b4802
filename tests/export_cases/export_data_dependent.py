# EXPECT = {"failing_stage": "export", "last_passing_stage": "none", "line": "export_data_dependent.py:16"}
"""torch.export of a module that branches on a tensor's value: export cannot trace a data-dependent branch."""
import torch


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        # the branch export cannot trace: its condition is a value, not a shape
        scale = h.abs().mean()
        h = h * scale
        if h.sum() > 0:
            return torch.relu(h)
        return torch.sigmoid(h)


model = Gate().eval()
x = torch.randn(4, 8)
ep = torch.export.export(model, (x,))
print(ep.module()(x).shape)
