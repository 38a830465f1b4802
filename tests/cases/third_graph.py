# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "crash"], "graph": 2, "graph_count": 3}
# Graph breaks split f into three graphs; only the third holds the op with the planted bug.
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


def f(x):
    x = x * 2
    torch._dynamo.graph_break()
    x = x.sin() + 1
    torch._dynamo.graph_break()
    return torch.relu(x - 0.5)


print(torch.compile(f)(torch.randn(4)))
