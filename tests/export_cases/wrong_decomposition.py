# EXPECT = {"failing_stage": "decompose", "last_passing_stage": "export"}
"""The script decomposes its exported program with its own table, in which gelu's decomposition is wrong (the
tanh approximation written with a wrong constant): export is right, the decomposed program is not."""
import math

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.nn.functional.gelu(self.fc(x))


def my_gelu(x, approximate="none"):
    # wrong: 0.44715 instead of 0.044715
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.44715 * x ** 3)))


torch.manual_seed(0)
model = Block().eval()
x = torch.randn(4, 8) * 3
table = torch.export.default_decompositions()
table[torch.ops.aten.gelu.default] = my_gelu
ep = torch.export.export(model, (x,)).run_decompositions(table)
with torch.no_grad():
    torch.testing.assert_close(ep.module()(x), model(x), atol=1e-3, rtol=1e-3)
print("ok")
