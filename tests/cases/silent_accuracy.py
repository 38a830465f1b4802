# EXPECT = {"failing_stage": "inductor", "kinds": ["accuracy"], "max_nodes": 4, "args": ["--check-accuracy"]}
# Wrong numbers, and the script never checks: only --check-accuracy can see it.
import torch
from _blocks import model

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
out = torch.compile(model())(torch.randn(4, 16))
print("done", out.shape)
