# EXPECT = {"failing_stage": "aoti_run", "last_passing_stage": "decompose"}
"""Genuine AOTInductor issue pytorch/pytorch#153992 (https://github.com/pytorch/pytorch/issues/153992), reproduced on
torch 2.13.0 CPU (no particular vector ISA needed): a model exported and AOT-compiled with an example input that is
a slice of a bigger tensor (not contiguous) is then run on a newly created tensor of the same shape. The package
assumes the example's strides and checks none by default (only under AOTI_RUNTIME_CHECK_INPUTS=1), so on CPU it
silently returns wrong values, where the exported program (and eager) answer right. The issue's report (CUDA)
failed with an error from the package's run instead."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return torch.relu(self.conv(x)) + x[:, :1, 1:-1, 1:-1]


torch.manual_seed(0)
model = Net().eval()
frames = torch.randn(2, 6, 10, 10)
x = frames[:, :3]  # the first three channels: a slice, not contiguous
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep)
    compiled = torch._inductor.aoti_load_package(path)
    torch.testing.assert_close(compiled(x), model(x))
    fresh = torch.randn(2, 3, 10, 10)  # the same shape, newly created (contiguous)
    torch.testing.assert_close(compiled(fresh), model(fresh))
print("ok")
