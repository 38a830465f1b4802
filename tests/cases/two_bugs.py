# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "max_nodes": 5}
# Two planted bugs in one graph: relu throws at run time; log1p's codegen asserts (an unrecognised value of
# its test hook), so compiling fails first and that is the bug. A smaller graph holding relu but not log1p
# fails differently (at run time) and must be refused by the minimizer.
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
torch._inductor.config.cpp.inject_log1p_bug_TESTING_ONLY = "compile_error"


def f(x):
    a = torch.relu(x * 3)
    b = torch.sin(a) + a
    return torch.log1p(b.abs()) * 2


print(torch.compile(f)(torch.randn(8)))
