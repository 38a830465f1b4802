# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "custom op", "issue": 139707, "repro_kinds": ["source"], "max_nodes": 12, "max_lines": 40}
# pytorch/pytorch#139707: Adding device-specific autograd kernel for aten builtin operators breaks `torch.compile`
# CLASS: custom op
# WHY: a torch.library "AutogradCPU" kernel registered for aten::tanh is run on FakeTensors while Dynamo traces, so its numpy-backed body fails (eager runs it on real tensors)
import numpy as np
import torch

torch.manual_seed(0)


def _np_tanh(x):
    return torch.as_tensor(np.tanh(x.detach().cpu().numpy()), device=x.device)


class NumpyTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = _np_tanh(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return grad_out * (1.0 - out * out)


def tanh_autograd_cpu(x):
    return NumpyTanh.apply(x)


# route aten::tanh on CPU through our own autograd kernel
_lib = torch.library.Library("aten", "IMPL")
_lib.impl("tanh", tanh_autograd_cpu, "AutogradCPU")


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.tanh(self.lin(x)).sum()


model = Block()
x = torch.randn(4, 8)

ref = model(x)
compiled = torch.compile(model)
out = compiled(x)
torch.testing.assert_close(out, ref)
print("ok", out.item())
