# EXPECT = {"failing_stage": "eager", "kinds": ["exit"], "class": "Dynamo silent side effect", "issue": 197896, "repro_kinds": ["source"], "max_lines": 60}
# pytorch/pytorch#197896: [dynamo] writes to closure-captured containers from a method of a class defined inside a function are dropped
# CLASS: Dynamo silent side effect
# WHY: list/dict mutations made by a method of a locally defined class instantiated inside the compiled forward are silently dropped (closure-captured containers stay empty), tensor outputs are correct
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)


def build_monitored_mlp(dim=32, hidden=64, depth=3):
    """Builds an MLP plus a closure-backed activation log.

    Each forward creates a fresh Probe that writes into the `call_counts`
    dict and the `shape_log` list owned by this factory.
    """
    call_counts = {}
    shape_log = []

    class Probe:
        def __init__(self, tag):
            self.tag = tag

        def record(self, name, t):
            key = f"{self.tag}/{name}"
            call_counts[key] = call_counts.get(key, 0) + 1
            shape_log.append((key, tuple(t.shape)))
            return t

    class MonitoredMLP(nn.Module):
        def __init__(self):
            super().__init__()
            dims = [dim] + [hidden] * (depth - 1) + [dim]
            self.layers = nn.ModuleList(
                nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:])
            )

        def forward(self, x):
            probe = Probe("mlp")
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i < len(self.layers) - 1:
                    x = torch.relu(x)
                probe.record(f"layer{i}", x)
            return x

    return MonitoredMLP(), call_counts, shape_log


def run(compile_it):
    torch.manual_seed(0)
    model, counts, log = build_monitored_mlp()
    fwd = torch.compile(model) if compile_it else model
    x = torch.randn(8, 32)
    outs = [fwd(x) for _ in range(2)]
    return outs, dict(counts), list(log)


ref_outs, ref_counts, ref_log = run(compile_it=False)
cmp_outs, cmp_counts, cmp_log = run(compile_it=True)

for a, b in zip(cmp_outs, ref_outs):
    torch.testing.assert_close(a, b)

print("eager    counts:", ref_counts)
print("compiled counts:", cmp_counts)
if cmp_counts != ref_counts or cmp_log != ref_log:
    print(f"activation log lost: eager logged {len(ref_log)} entries, compiled {len(cmp_log)}")
    sys.exit(1)
print("OK")
