# EXPECT = {"failing_stage": "inductor", "kinds": ["exit"], "graph": 1, "max_nodes": 4}
# A silent numeric bug in the second of two compiled graphs, found by the script's own check, which exits 1: no
# graph raises, so the original run saves each graph as of its recent call and the bisect checks those.
import sys

import torch

torch.manual_seed(0)
w = torch.randn(16, 16)
step = torch.compile(lambda a: torch.sigmoid(a @ w) * 3)
x = torch.randn(8, 16)
for _ in range(3):
    x = step(x)

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
evaluate = torch.compile(lambda a: torch.relu(a @ w) * 2)
if not torch.allclose(evaluate(x), torch.relu(x @ w) * 2, atol=1e-5):
    print("evaluation differs from eager", file=sys.stderr)
    sys.exit(1)
