"""An inductor compile error hidden by suppress_errors: the model silently runs in eager."""
import torch
import torch._dynamo
import torch._inductor.config

torch._dynamo.config.suppress_errors = True  # FALLBACK: suppress
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


def block(x):  # FALLBACK: function
    return torch.relu(x @ x.T) + 1


compiled = torch.compile(block)
x = torch.randn(32, 32)
for _ in range(4):
    compiled(x)
