# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "inductor compile error", "issue": 193263, "repro_kinds": ["graph"], "max_nodes": 4, "max_lines": 20}
# pytorch/pytorch#193263: [inductor] torch.compile fails to compile cumsum on a 0-dim constant tensor: IndexError: tuple index out of range (0-dim variant of #179571, persists on torch 2.12.0)
# CLASS: inductor compile error
# WHY: cumsum over dim 0 of a 0-dim (scalar) tensor created inside the graph is valid in eager (returns the scalar) but inductor's scan lowering indexes the empty size tuple and raises IndexError
import torch

torch.manual_seed(0)


def running_total(x):
    # scalar bias accumulated with cumsum, then broadcast onto the input
    bias = torch.tensor(5.0).cumsum(0)
    return x + bias


x = torch.randn(4)
expected = running_total(x)
got = torch.compile(running_total)(x)
torch.testing.assert_close(got, expected)
print("ok", got)
