# EXPECT = {"failing_stage": "relu_compile_error_TESTING_ONLY", "kinds": ["exception"]}
# The script's own backend is what fails: every stock stage passes.
import torch


def f(x):
    return torch.relu(x) + 1


print(torch.compile(f, backend="relu_compile_error_TESTING_ONLY")(torch.randn(8)))
