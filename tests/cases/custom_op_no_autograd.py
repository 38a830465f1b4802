# EXPECT = {"exit_code": 3}
# A custom op with no autograd formula, used under grad: eager fails too, so this is the user's bug, not the compiler's.
import torch

@torch.library.custom_op("rk::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2

@scale.register_fake
def _(x):
    return torch.empty_like(x)

x = torch.randn(4, requires_grad=True)
out = torch.compile(lambda t: scale(t).sin())(x)
out.sum().backward()
print(x.grad)
