# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "flaky", "issue": 145445, "repro_kinds": ["source"], "max_nodes": 6, "max_lines": 30}
# pytorch/pytorch#145445: [dynamo] `random.Random` gives wrong result on second call
# CLASS: flaky
# WHY: Dynamo bakes the trace-time draw of a random.Random argument into the graph, so every later call reuses the first offset; eager draws afresh, and the unseeded (per-process) RNG makes the second draw differ from the first only about half the time
import random

import torch

torch.manual_seed(0)


def augment(img, rng):
    # random brightness offset, driven by a persistent Python RNG (as data pipelines do)
    offset = rng.randint(0, 1)
    return img * 2.0 + offset


img = torch.arange(6.0).reshape(2, 3)
rng = random.Random()  # seeded from OS entropy: differs per process
ref_rng = random.Random()
ref_rng.setstate(rng.getstate())

compiled = torch.compile(augment, backend="eager", fullgraph=True)
for step in range(2):
    expected = augment(img, ref_rng)
    actual = compiled(img, rng)
    torch.testing.assert_close(actual, expected, msg=f"step {step}: compiled random offset differs from eager")
print("ok")
