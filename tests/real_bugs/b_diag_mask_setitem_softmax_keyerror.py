# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "inductor compile error", "issue": 196570, "repro_kinds": ["graph", "graph_in_context"], "max_nodes": 12, "max_lines": 40}
# pytorch/pytorch#196570 (a duplicate of #188228): [inductor] KeyError in the C++ backend's outer-loop fusion when a mask built by index assignment feeds a softmax
# CLASS: inductor compile error
# WHY: the diagonal mask is a mutation output (index_put on torch.full); the C++ scheduler's outer-loop fusion promotes it to a local buffer and LoopBody.get_read_expr looks up a buffer name it never recorded: KeyError 'buf4'. Every cut of the graph renumbers the buffer (buf1..buf3): the same bug, another name
import torch
import torch.nn as nn


class LocalSelfAttention(nn.Module):
    """Single-head attention where each token may only attend to itself.

    The additive mask is built inside forward (as many users do) by filling
    a large negative value and then zeroing the diagonal with advanced
    indexing.
    """

    def __init__(self, dim: int = 16, seq_len: int = 8, neg_inf: float = -10000.0):
        super().__init__()
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.scale = dim ** -0.5
        self.seq_len = seq_len
        self.neg_inf = neg_inf

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = (self.q_proj(x) @ self.k_proj(x).transpose(-1, -2)) * self.scale
        n = self.seq_len
        mask = torch.full((n, n), self.neg_inf)
        rows = torch.arange(n).unsqueeze(1)
        cols = torch.arange(n).unsqueeze(0)
        mask[cols, rows] = 0
        return torch.softmax(scores + mask, dim=-1)


def main():
    torch.manual_seed(0)
    attn = LocalSelfAttention(dim=16, seq_len=8).eval()
    tokens = torch.randn(8, 16)

    with torch.no_grad():
        expected = attn(tokens)
        compiled = torch.compile(attn)
        actual = compiled(tokens)

    torch.testing.assert_close(actual, expected)
    print("OK")


if __name__ == "__main__":
    main()
