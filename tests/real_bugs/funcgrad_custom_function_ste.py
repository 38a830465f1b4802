# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "backward-only", "issue": 193279, "repro_kinds": ["source"], "max_nodes": 20, "max_lines": 30}
# pytorch/pytorch#193279: Dynamo silently drops custom `backward` of `autograd.Function` under `torch.func.grad`, producing wrong gradients
# CLASS: backward-only
# WHY: inside a compiled torch.func.grad, Dynamo inlines the autograd.Function forward and differentiates round() itself (grad 0) instead of calling the custom straight-through backward
import torch

torch.manual_seed(0)


class RoundSTE(torch.autograd.Function):
    """Quantize with a straight-through estimator: forward rounds, backward is identity."""

    @staticmethod
    def forward(x):
        return torch.round(x * 4) / 4

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g


def quant_loss(w, x, target):
    pred = x @ RoundSTE.apply(w)
    return ((pred - target) ** 2).mean()


grad_fn = torch.func.grad(quant_loss)

w = torch.randn(8, 3)
x = torch.randn(16, 8)
target = torch.randn(16, 3)

g_eager = grad_fn(w, x, target)
g_comp = torch.compile(grad_fn, backend="inductor")(w, x, target)
print("eager grad norm:", g_eager.norm().item(), " compiled grad norm:", g_comp.norm().item())
torch.testing.assert_close(g_comp, g_eager,
                           msg=lambda m: "compiled func.grad ignored the custom STE backward:\n" + m)
print("OK")
