# EXPECT = {"failing_stage": "decompose", "last_passing_stage": "export"}
"""Genuine torch.export issue pytorch/pytorch#180354 (https://github.com/pytorch/pytorch/issues/180354), reproduced
on torch 2.13.0 CPU (no particular vector ISA needed): a torch.cond whose branches create a tensor (here an unused
torch.tensor(0), as in the issue) exports fine and its program runs, but run_decompositions() raises on it."""
import torch


def branch(x):
    torch.tensor(0)  # without this line run_decompositions passes
    return x.clone()


class Gate(torch.nn.Module):
    def forward(self, x):
        return torch.cond(x.any(), branch, branch, (x,))


x = torch.ones(())
ep = torch.export.export(Gate(), (x,))
torch.testing.assert_close(ep.module()(x), x)
ep = ep.run_decompositions()
torch.testing.assert_close(ep.module()(x), x)
print("ok")
