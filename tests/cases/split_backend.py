# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "pieces": 2, "failed_piece": 2}
"""The script's own backend splits each graph in two (before and after the relu) with split_module and has
inductor compile each piece; inductor's planted relu bug makes the second piece fail to compile."""
import torch
from torch.fx.passes.split_module import split_module


def two_pieces(gm, example_inputs):
    seen_relu = [False]

    def piece_of(node):
        if node.op == "call_function" and node.target is torch.relu:
            seen_relu[0] = True
        return 1 if seen_relu[0] else 0

    split = split_module(gm, None, piece_of)
    for name, child in split.named_children():
        setattr(split, name, PieceCompiled(child))
    return split


class PieceCompiled(torch.nn.Module):
    """A piece compiled by inductor on first call (its real inputs are known only then)."""

    def __init__(self, piece):
        super().__init__()
        self.piece, self.compiled = piece, None

    def forward(self, *args):
        if self.compiled is None:
            self.compiled = torch._inductor.compile(self.piece, list(args))
        return self.compiled(*args)


def f(x):
    y = torch.sin(x) * 2
    return torch.relu(y) + 1


torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
print(torch.compile(f, backend=two_pieces)(torch.randn(8)))
