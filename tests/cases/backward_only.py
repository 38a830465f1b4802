# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "crash"], "max_nodes": 6}
# The forward compiles and runs; only the backward kernel holds relu (the planted bug), so loss.backward() fails.
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return torch.relu(grad) * 2


def f(x, w):
    h = torch.tanh(x @ w)
    return ScaleGrad.apply(h).sum()


x = torch.randn(4, 8)
w = torch.randn(8, 8, requires_grad=True)
loss = torch.compile(f)(x, w)
print("forward ok", loss.item())
loss.backward()
print("backward ok", w.grad.norm().item())
