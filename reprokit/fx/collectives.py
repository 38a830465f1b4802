"""A captured graph that holds collectives (functional all_reduce, all_gather, ...): it names its process group,
so it runs elsewhere only with one. PyTorch's fake process group (its own tests', and fx_graph_runnable's) gives
one process the rank and world size the graph was captured with; its collectives return their input unchanged,
which keeps every computation before and after them, where compiler bugs live, as it was."""

from __future__ import annotations


def has_collectives(gm) -> bool:
    """Whether an FX graph calls a collective (torch's functional c10d ops or torch.distributed's)."""
    for node in gm.graph.nodes:
        if node.op == "call_function":
            name = str(getattr(node.target, "__module__", "")) + "." + str(node.target)
            if "c10d_functional" in name or "_functional_collectives" in name or "distributed" in name:
                return True
    return False


def fake_group_prelude(gm, group: dict | None = None) -> str:
    """Statements that initialise a fake process group of the captured rank and world size, when the graph holds
    collectives and this process was one rank of a group (group: as recorded, {"rank", "world_size"}, for a job
    that destroyed its group before the graph is written); "" otherwise."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        group = {"rank": dist.get_rank(), "world_size": dist.get_world_size()}
    if not has_collectives(gm) or not group:
        return ""
    rank, world = group["rank"], group["world_size"]
    return (
        "# The graph's collectives need a process group: PyTorch's fake one plays this rank of the job in one\n"
        "# process (its collectives return their input unchanged).\n"
        "import torch.distributed\n"
        "from torch.testing._internal.distributed.fake_pg import FakeStore\n\n"
        "if not torch.distributed.is_initialized():\n"
        f"    torch.distributed.init_process_group('fake', store=FakeStore(), rank={rank}, world_size={world})\n"
    )
