# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "issue": 166525, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 20, "max_lines": 35, "class": "inductor crash (lowering of the while_loop HOP); eager and aot_eager backends work"}
# pytorch/pytorch#166525: Inductor Fails with AttributeError: 'int' object has no attribute 'meta' for torch.while_loop Containing Scalar Values in Loop State
# CLASS: inductor crash (lowering of the while_loop HOP); eager and aot_eager backends work
# WHY: a Python int in the while_loop carried state reaches Inductor's while_loop lowering / subgraph fake-tensor update as a plain int instead of a tensor/symint node (on 2.15.0 it surfaces as "A subgraph argument other than striding has been modified; FakeTensorUpdater cannot update this argument!")
import torch
import torch.nn as nn

torch.manual_seed(0)


class IterativeRefiner(nn.Module):
    """Accumulate a fixed number of residual updates with torch.while_loop."""

    def __init__(self, dim=4, steps=3):
        super().__init__()
        self.steps = steps
        self.delta_a = nn.Parameter(torch.randn(dim, dim) * 0.1)
        self.delta_b = nn.Parameter(torch.randn(dim, dim) * 0.1)

    def forward(self, a, b):
        da = a @ self.delta_a
        db = b @ self.delta_b

        def cond_fn(i, x, y):
            return i < self.steps

        def body_fn(i, x, y):
            return i + 1, x + da, y + db

        _, x, y = torch.while_loop(cond_fn, body_fn, (0, torch.zeros_like(a), torch.zeros_like(b)))
        return x + y


model = IterativeRefiner().eval()
a = torch.randn(4, 4)
b = torch.randn(4, 4)

with torch.no_grad():
    ref = model(a, b)
    out = torch.compile(model)(a, b)

torch.testing.assert_close(out, ref)
print("OK")
