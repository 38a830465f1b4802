# EXPECT = {"failing_stage": "aoti_run", "last_passing_stage": "decompose"}
"""aoti_accuracy.py with the check as many scripts write it: compare, print, sys.exit(1). Its cut program's check
raises from assert_close instead; both report the one wrong result (issue #32)."""
import sys

import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.sigmoid(torch.relu(self.fc(x)))


torch.manual_seed(0)
model = MLP().eval()
x = torch.randn(4, 8)
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep)
    compiled = torch._inductor.aoti_load_package(path)
    got, want = compiled(x), model(x)
    if not torch.allclose(got, want, atol=1e-4):
        print(f"AOTI differs from eager by {(got - want).abs().max():.3g}")
        sys.exit(1)
print("ok")
