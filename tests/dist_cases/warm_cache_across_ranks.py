# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "warm_cache": ["fx_graph_cache", "autograd_cache"]}
# Two ranks under torchrun (gloo) share one inductor cache, as ranks on a node do: rank 0 compiles first and stores
# the graph, then rank 1 compiles the same graph and loads it (the class of pytorch/pytorch#188332: a kernel loaded
# by another rank). Planted through torch's own custom post-grad pass hook: the pass registers the op it routes
# relu's result through, so a rank that loads the graph instead of compiling it calls an op it never registered.
import torch
import torch.distributed as dist
from torch._inductor.custom_graph_pass import CustomGraphPass

LIBRARIES = []


class RouteThroughKeep(CustomGraphPass):
    def __call__(self, graph):
        if not hasattr(torch.ops.demo_ranks, "keep"):
            lib = torch.library.Library("demo_ranks", "DEF")
            lib.define("keep(Tensor x) -> Tensor")
            lib.impl("keep", lambda x: x.clone(), "CompositeExplicitAutograd")
            LIBRARIES.append(lib)
        for node in list(graph.nodes):
            if node.op == "call_function" and node.target is torch.ops.aten.relu.default:
                with graph.inserting_after(node):
                    kept = graph.call_function(torch.ops.demo_ranks.keep.default, (node,))
                node.replace_all_uses_with(kept)
                kept.args = (node,)
                kept.meta = dict(node.meta)

    def uuid(self):
        return "route-through-keep-ranks-v1"


dist.init_process_group("gloo")
torch._inductor.config.post_grad_custom_post_pass = RouteThroughKeep()
x = torch.randn(64, generator=torch.Generator().manual_seed(0))
step = torch.compile(lambda t: torch.relu(t) * 2 + 1)
for turn in range(dist.get_world_size()):  # one rank after the other: the later ones find the graph stored
    if turn == dist.get_rank():
        torch.testing.assert_close(step(x), torch.relu(x) * 2 + 1)
    dist.barrier()
dist.destroy_process_group()
