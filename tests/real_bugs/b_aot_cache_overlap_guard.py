# EXPECT = {"failing_stage": "inductor", "kinds": ["exit"], "class": "warm cache", "issue": 184694, "repro_kinds": ["warm_cache"], "max_lines": 60}
# pytorch/pytorch PR #184694 ("Fix AOTAutograd input overlap guards": the guards kept "including static traces and
# AOTAutograd cache hits"; the PR names #178680, whose thread was not in the stored threads; see also #139789).
# CLASS: warm cache. A cold run compiles a second graph when the mutated inputs start to overlap (the storage-overlap
# guard fails); on a warm run the graph comes from the AOT autograd cache without that guard, so the overlapping call
# reuses the graph for disjoint inputs and returns a wrong result. With the caches off it passes. Its own check exits 1.
import sys
import torch
from torch._dynamo.utils import counters


def f(a, b):
    a.add_(1)
    b.mul_(2)
    return a + 1


cf = torch.compile(f, backend="inductor", dynamic=True)


def views(base, overlap):
    a = base[0:8]
    # non-overlapping: b = base[10:14]; overlapping: b = base[4:8] (inside a)
    b = base[4:8] if overlap else base[10:14]
    return a, b


def run(overlap):
    base = torch.zeros(20)
    base_ref = base.clone()
    ref = f(*views(base_ref, overlap))
    out = cf(*views(base, overlap))
    ok = torch.equal(out, ref) and torch.equal(base, base_ref)
    print(f"overlap={overlap} ok={ok} out={out.tolist()} ref={ref.tolist()}")
    return ok


r1 = run(False)
r2 = run(True)
print("aot_autograd counters:", dict(counters["aot_autograd"]),
      "frames compiled:", counters["stats"]["unique_graphs"])
if not (r1 and r2):
    print("BUG: compiled result differs from eager")
    sys.exit(1)
print("PASS")
