# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "max_lines": 9}
# A data-dependent branch cannot be traced into one graph: a genuine Dynamo failure under fullgraph=True.
import torch

SCALE = 2.0


def helper(t):
    return t * SCALE


@torch.compile(fullgraph=True)
def f(x):
    y = helper(x).sin()
    if y.sum() > 0:
        return y.cos()
    return y


x = torch.randn(8)
print("input", x.shape)
print(f(x))
