# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "crash"], "graph": 0, "subsystem": "lowerings", "detail": "relu", "max_nodes": 4}
import torch
from _blocks import model

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
m = model()
out = torch.compile(m)(torch.randn(4, 16))
print(out.sum())
