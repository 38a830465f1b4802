# A wrong decomposition registered at run time in inductor's decomposition table: hardswish without its clamp.
# The script's own check catches it; the fault is in aot_eager_decomp_partition's decomposition subsystem.
import torch
import torch.nn as nn
from torch._inductor.decomposition import decompositions

aten = torch.ops.aten


def hardswish_without_clamp(x):
    return x * (x + 3) / 6


decompositions[aten.hardswish.default] = hardswish_without_clamp

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.Hardswish(), nn.Linear(32, 8))
x = torch.randn(4, 16) * 4
with torch.no_grad():
    torch.testing.assert_close(torch.compile(model)(x), model(x))
print("ok")
