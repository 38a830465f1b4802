# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "custom autograd.Function", "issue": 192985, "repro_kinds": ["source"], "max_lines": 45}
# pytorch/pytorch#192985: [dynamo] torch.func.jvp of a custom autograd.Function inside compile drops its jvp
# CLASS: custom autograd.Function
# WHY: under torch.func.jvp inside a compiled function, Dynamo inlines the autograd.Function forward and drops its custom jvp, so the straight-through tangent becomes round()'s zero derivative (no error, no graph break)
import torch
import torch.nn as nn

torch.manual_seed(0)


class RoundSTE(torch.autograd.Function):
    """Quantize to a fixed grid; gradients/tangents pass straight through."""

    @staticmethod
    def forward(x, scale):
        return torch.round(x / scale) * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, None

    @staticmethod
    def jvp(ctx, x_t, scale_t):
        return x_t


class QuantMLP(nn.Module):
    def __init__(self, dim=16, scale=0.05):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, 1)
        self.scale = scale

    def forward(self, x):
        h = RoundSTE.apply(torch.tanh(self.fc1(x)), self.scale)
        return self.fc2(h).squeeze(-1)


def directional_derivative(model, x, v):
    # forward-mode "forward gradient" of the output w.r.t. the input along v
    _, tangent = torch.func.jvp(model, (x,), (v,))
    return tangent


model = QuantMLP()
x = torch.randn(8, 16)
v = torch.randn(8, 16)

expected = directional_derivative(model, x, v)
actual = torch.compile(directional_derivative)(model, x, v)
print("eager tangent   :", expected[:4])
print("compiled tangent:", actual[:4])
torch.testing.assert_close(actual, expected)
print("OK")
