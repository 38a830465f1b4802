# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exit"], "class": "input mutation", "issue": 198095, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 5, "max_lines": 40}
# pytorch/pytorch#198095: [aot autograd] an input mutated in place while another input is a view of it: the returned view is regenerated from the wrong base
# CLASS: input mutation
# WHY: input mutated in place while a second input is a view of it; the returned view of the aliased input is regenerated from the wrong base (returns row 0 of the bank instead of row 1)
import sys

import torch

torch.manual_seed(0)

SLOTS, DIM = 6, 8
DECAY = 0.5


class MemoryBank:
    """Fixed-size memory of past embeddings, slot 0 is the oldest."""

    def __init__(self):
        self.bank = torch.randn(SLOTS, DIM, dtype=torch.float64)

    @property
    def recent(self):
        # every slot except the oldest one (a view into the bank)
        return self.bank[1:]


def refresh(bank, recent, update):
    # decay all stored embeddings and add the new contribution in place
    bank.mul_(DECAY).add_(update)
    # hand back the oldest of the "recent" slots, i.e. bank[1]
    return recent[0]


def run(fn):
    torch.manual_seed(0)
    mem = MemoryBank()
    update = torch.randn(DIM, dtype=torch.float64)
    out = fn(mem.bank, mem.recent, update)
    return out.clone(), mem.bank.clone()


ref_out, ref_bank = run(refresh)
cmp_out, cmp_bank = run(torch.compile(refresh))

torch.testing.assert_close(cmp_bank, ref_bank)
if not torch.allclose(cmp_out, ref_out):
    print("compiled recent[0] does not match eager")
    print("eager   :", ref_out[:4])
    print("compiled:", cmp_out[:4])
    print("compiled matches bank[0]?", torch.allclose(cmp_out, cmp_bank[0]))
    sys.exit(1)
print("OK")
