# A script written for torch 2.15: torch.compile's keywords `name=` and `dynamic_shapes=` are new there.
# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "graph": 0}
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
head = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
compiled = torch.compile(head, name="mlp_head", dynamic_shapes=None)
print(compiled(torch.randn(4, 16)).sum())
