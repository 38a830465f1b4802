# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "graph": 0, "max_nodes": 4}
# The script checks its own result: a silent numeric bug shows up as its AssertionError.
import torch
from _blocks import model

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
m = model()
x = torch.randn(4, 16)
expected = m(x)
actual = torch.compile(m)(x)
assert torch.allclose(expected, actual, atol=1e-4), f"compiled differs: {(expected - actual).abs().max()}"
