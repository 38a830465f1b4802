# EXPECT = {"exit_code": 4}
# pytorch/pytorch#181696, closed as not a bug: eval BatchNorm -> ELU -> GroupNorm -> log on a constant input.
# Eager's float32 GroupNorm leaves a tiny non-zero where exact math gives 0 for a constant group, so log() of it
# differs from compiled by about 1.3; compiled is the one that agrees with float64. Not a wrong answer: exit 4.
import torch
import torch.nn as nn


def parts():
    torch.manual_seed(0)
    return nn.BatchNorm1d(10).eval(), nn.ELU(), nn.GroupNorm(10, 10).eval()


def model(bn, elu, gn):
    x = torch.ones([6, 10, 12])
    return torch.log(torch.clamp(gn(elu(bn(x))), min=1e-6))


eager = model(*parts())
compiled = torch.compile(model, fullgraph=True)(*parts())
assert torch.allclose(eager, compiled, atol=1e-3), f"compiled differs: {(eager - compiled).abs().max()}"
