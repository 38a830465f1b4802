# EXPECT = {"failing_stage": "eager", "kinds": ["exit"], "class": "stale_guard_wrong_branch", "issue": 196173, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 12, "max_lines": 45}
# pytorch/pytorch#196173: [dynamo] branch chosen by an `is` test between mutable object attributes is reused after the identity flips, and the flip is lost
# CLASS: stale_guard_wrong_branch
# WHY: the compiled step keeps taking the first-traced branch although `sched.active is sched.even` alternates, and the attribute write that flips it is dropped, so outputs and object state diverge from eager
import sys

import torch

torch.manual_seed(0)


class PhaseConfig:
    def __init__(self, name, lr):
        self.name = name
        self.lr = lr


class AlternatingScheduler:
    """Ping-pongs between two phase configs: one step 'even', the next 'odd'."""

    def __init__(self):
        self.even = PhaseConfig("even", 0.1)
        self.odd = PhaseConfig("odd", 0.01)
        self.active = self.even


def update(weights, grads, sched):
    on_even = sched.active is sched.even
    # flip to the other phase for the next call
    sched.active = sched.odd if on_even else sched.even
    if on_even:
        # even steps: plain SGD step
        return weights - 0.1 * grads
    # odd steps: damped step plus a small decay
    return weights * 0.99 - 0.01 * grads


def run(step_fn, steps=6):
    sched = AlternatingScheduler()
    w = torch.randn(8)
    g = torch.randn(8)
    history = []
    for _ in range(steps):
        w = step_fn(w, g, sched)
        history.append(w.clone())
    return history, sched.active.name


torch.manual_seed(0)
ref_hist, ref_phase = run(update)
torch.manual_seed(0)
cmp_hist, cmp_phase = run(torch.compile(update, backend="eager"))

for step, (r, c) in enumerate(zip(ref_hist, cmp_hist)):
    if not torch.allclose(r, c):
        print(f"step {step}: compiled weights differ from eager (max diff {(r - c).abs().max():.4f})")
        sys.exit(1)
if ref_phase != cmp_phase:
    print(f"scheduler ended in phase {cmp_phase!r}, eager ended in {ref_phase!r}")
    sys.exit(1)
print("OK")
