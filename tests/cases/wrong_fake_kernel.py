# EXPECT = {"failing_stage": "aot_eager_decomp_partition_crossref", "kinds": ["exception"], "exc_type": "MetadataMismatchError", "op": "rk.scale.default"}
"""A custom op whose fake kernel says float64 while the real kernel returns float32. Dynamo and AOT autograd pass
(they trust the fake kernel), the crossref stage catches it, and inductor, which plans its buffers from the fake
kernel, returns the wrong dtype: the script's check against eager fails."""
import torch


@torch.library.custom_op("rk::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scale.register_fake
def _(x):
    return torch.empty_like(x, dtype=torch.float64)  # wrong: the real kernel keeps x's dtype


def f(x):
    return scale(x).sum(0) + 1


x = torch.randn(4, 6)
out = torch.compile(f)(x)
assert out.dtype == f(x).dtype, f"compiled returns {out.dtype}, eager {f(x).dtype}"
print(out)
