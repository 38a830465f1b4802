# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "warm_cache": ["fx_graph_cache"]}
# A failure only a warm inductor cache shows (issue #32), planted through torch's own custom-pass hook: the script's
# post-grad pass routes relu's result through an op the pass itself registers the first time it runs. A cold run
# compiles, so the pass runs and registers the op. A second run on the same cache loads the compiled graph from the
# FX graph cache, the pass never runs, and the loaded code calls an op nobody registered. The class is real:
# compile-time side effects that a cache hit skips (pytorch/pytorch#130572 moved post-compilation steps into the
# cache for that reason).
import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

LIBRARIES = []


class RouteThroughKeep(CustomGraphPass):
    def __call__(self, graph):
        if not hasattr(torch.ops.demo_warm, "keep"):
            lib = torch.library.Library("demo_warm", "DEF")
            lib.define("keep(Tensor x) -> Tensor")
            lib.impl("keep", lambda x: x.clone(), "CompositeExplicitAutograd")
            LIBRARIES.append(lib)
        for node in list(graph.nodes):
            if node.op == "call_function" and node.target is torch.ops.aten.relu.default:
                with graph.inserting_after(node):
                    kept = graph.call_function(torch.ops.demo_warm.keep.default, (node,))
                node.replace_all_uses_with(kept)
                kept.args = (node,)
                kept.meta = dict(node.meta)

    def uuid(self):
        return "route-through-keep-v1"  # the pass's code, not its side effect, is what the cache key covers


torch._inductor.config.post_grad_custom_post_pass = RouteThroughKeep()
torch.manual_seed(0)
x = torch.randn(64)
out = torch.compile(lambda t: torch.relu(t) * 2 + 1)(x)
torch.testing.assert_close(out, torch.relu(x) * 2 + 1)
print("ok", float(out.sum()))
