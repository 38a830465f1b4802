# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "accuracy"], "max_nodes": 8}
# Issue 46: a genuine-looking accuracy bug in a random op. A custom post-grad pass the script installs makes
# compiled code silently skip dropout (planted, as custom_pass_bug.py plants a wrong relu). Eager and compiled are
# seeded alike and inductor falls back to eager's random ops, so they draw the same mask: only the skipped
# dropout differs. A float64 reference drawing a mask of its own must not excuse it.
import torch
import torch.nn.functional as F

torch._inductor.config.fallback_random = True


def skip_dropout(graph):
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target is torch.ops.aten.native_dropout.default:
            for user in list(node.users):
                if user.args[1] == 0:  # dropout's output, not its mask
                    user.replace_all_uses_with(node.args[0])  # wrong on purpose: no dropout at all


torch._inductor.config.post_grad_custom_post_pass = skip_dropout


def f(x):
    return F.dropout(torch.relu(x), 0.5, True) * 2


x = torch.randn(64)
torch.manual_seed(0)
expected = f(x)
torch.manual_seed(0)
actual = torch.compile(f)(x)
torch.testing.assert_close(actual, expected)
