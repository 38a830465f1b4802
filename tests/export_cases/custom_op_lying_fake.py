# EXPECT = {"failing_stage": "aoti_run", "last_passing_stage": "decompose"}
"""A custom op whose fake kernel lies about its output's shape: export and the eager program are fine (the real
kernel runs), AOTInductor plans its buffers from the fake kernel."""
import torch


@torch.library.custom_op("reprokit_export::row_sums", mutates_args=())
def row_sums(x: torch.Tensor) -> torch.Tensor:
    return x.sum(dim=1, keepdim=True).expand(-1, x.shape[1]).contiguous() * 0.5


@row_sums.register_fake
def _(x):
    return x.new_empty(x.shape[0], 1)  # lies: the real kernel returns x's shape


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x) + row_sums(x)


torch.manual_seed(0)
model = Net().eval()
x = torch.randn(4, 8)
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    torch.testing.assert_close(ep.module()(x), model(x))
    path = torch._inductor.aoti_compile_and_package(ep)
    compiled = torch._inductor.aoti_load_package(path)
    torch.testing.assert_close(compiled(x), model(x))
print("ok")
