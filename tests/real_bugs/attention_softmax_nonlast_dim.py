# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "accuracy", "issue": 196468, "fixed_in": "2.15.0", "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 12, "max_lines": 35}
# pytorch/pytorch#196468: [inductor] Attention-shaped pattern rewrite ignores the softmax dim, silently computing attention over the last axis
# CLASS: accuracy
# WHY: inductor's SDPA pattern matcher rewrites matmul->div->softmax->dropout->matmul into fused attention even when softmax is over a non-last dim (slot-attention style), so it normalizes over the wrong axis
import torch
import torch.nn as nn

torch.manual_seed(0)


class SlotCompetition(nn.Module):
    """Slot-attention style: slots compete for inputs, i.e. softmax over the *slot* axis (dim=-2)."""

    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.dropout = nn.Dropout(0.1)

    def forward(self, slots, keys, values):
        logits = torch.matmul(slots, keys.transpose(-2, -1)).div(self.scale)   # (B, H, S, N)
        attn = torch.softmax(logits, dim=-2)                                   # normalize over slots
        attn = self.dropout(attn)
        return attn.matmul(values)                                             # (B, H, S, D)


m = SlotCompetition(8).eval()
slots = torch.randn(4, 4, 3, 8)
keys = torch.randn(4, 4, 5, 8)
values = torch.randn(4, 4, 5, 8)

with torch.no_grad():
    eager = m(slots, keys, values)
    compiled = torch.compile(m, backend="inductor")(slots, keys, values)
    ref = m(slots.double(), keys.double(), values.double())

print("max err vs fp64: eager=%.3e compiled=%.3e" %
      ((eager.double() - ref).abs().max(), (compiled.double() - ref).abs().max()))
torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=1e-4,
                           msg=lambda m: "compiled attention (softmax over dim=-2) is wrong:\n" + m)
print("OK")
