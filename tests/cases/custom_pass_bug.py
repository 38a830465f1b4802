# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "graph": 0, "max_nodes": 6}
# A custom post-grad pass the script installs through inductor's config (as PyTorch's compiler-bisector tests do)
# rewrites relu into a wrong op. The graph fails only with that hook: it must travel into the graph trials and
# into repro.py, as source.
import torch


def break_relu(graph):
    for node in graph.nodes:
        if node.op == "call_function" and node.target is torch.ops.aten.relu.default:
            node.target = torch.ops.aten.neg.default  # wrong on purpose


torch._inductor.config.post_grad_custom_post_pass = break_relu


def f(x):
    return torch.relu(x) * 2 + 1


x = torch.randn(32)
expected = f(x)
actual = torch.compile(f)(x)
assert torch.allclose(expected, actual), f"compiled differs: {(expected - actual).abs().max()}"
