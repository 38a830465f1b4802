# EXPECT = {"flaky": True, "args": ["--repeat", "4", "--jobs", "1"]}
# Fails on every second run: a counter file in FLAKY_DIR numbers the runs, and FLAKY_PATTERN (default "PF") says
# for run n, cyclically, whether the planted bug is on (F) or off (P).
import os

import torch

counter = os.path.join(os.environ["FLAKY_DIR"], "count")
n = int(open(counter).read()) if os.path.exists(counter) else 0
with open(counter, "w") as f:
    f.write(str(n + 1))
pattern = os.environ.get("FLAKY_PATTERN", "PF")
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error" if pattern[n % len(pattern)] == "F" else None
print(torch.compile(lambda x: torch.relu(x) + 1)(torch.randn(8)))
