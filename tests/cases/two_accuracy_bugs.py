# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "graph": 0, "max_nodes": 4}
# Two planted accuracy bugs in one graph, as in PyTorch's test_accuracy_vs_strict_accuracy: log1p's error never
# reaches the output (torch.where picks x either way), relu's does. The repro must keep relu, the bug the script
# sees, and not log1p, whose error a cut would expose.
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
torch._inductor.config.cpp.inject_log1p_bug_TESTING_ONLY = "accuracy"


def inner(x):
    y = torch.log1p(x)
    b = y > 0
    b = torch.logical_not(b)
    b = torch.logical_not(b)
    x = torch.relu(x)
    return torch.where(b, x, x)


x = torch.randn(64)
expected = inner(x)
actual = torch.compile(inner)(x)
assert torch.allclose(expected, actual, atol=1e-4), f"compiled differs: {(expected - actual).abs().max()}"
