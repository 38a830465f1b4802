# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "issue": 192872, "repro_kinds": ["source"], "max_lines": 30, "repro_keeps": ["graph_break()", "out_n == ref_n"], "class": "Dynamo (fails with backend=\"eager\"), silent wrong result across a graph break"}
# pytorch/pytorch#192872: dynamo: mutation to a LOAD_BUILD_CLASS-created class's sourceless attribute is lost across a graph break
# CLASS: Dynamo (fails with backend="eager"), silent wrong result across a graph break
# WHY: with enable_trace_load_build_class, a class built inside the compiled frame has no source; the append to its class attribute made before the graph break is not reconstructed, so only the post-break mutation survives
import torch
import torch.nn as nn
import torch._dynamo

torch._dynamo.config.enable_trace_load_build_class = True
torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.fc(self.norm(x)))


class Encoder(nn.Module):
    def __init__(self, dim=16, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList([Block(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, 4)

    def forward(self, x):
        class Trace:  # per-call record of which stages ran
            visited = []

        h = self.blocks[0](x)  # stem
        Trace.visited.append("stem")
        torch._dynamo.graph_break()  # e.g. a debugging/logging hook after the stem
        for blk in self.blocks[1:]:
            h = blk(h)
        Trace.visited.append("body")
        logits = self.head(h)
        # normalise by the number of stages that actually executed
        return logits / len(Trace.visited), len(Trace.visited)


model = Encoder().eval()
x = torch.randn(8, 16)

with torch.no_grad():
    ref, ref_n = model(x)
    compiled = torch.compile(model, backend="eager")
    out, out_n = compiled(x)

print("stages visited: eager", ref_n, "compiled", out_n)
assert out_n == ref_n, f"compiled run recorded {out_n} stages, eager recorded {ref_n}"
torch.testing.assert_close(out, ref)
print("OK")
