# EXPECT = {"flaky": True, "args": ["--repeat", "4", "--jobs", "1"]}
# Fails on every second run (every FLAKY_EVERY-th: runs FLAKY_EVERY-1, 2*FLAKY_EVERY-1, ...): a counter file in
# FLAKY_DIR decides whether the planted bug is on.
import os

import torch

counter = os.path.join(os.environ["FLAKY_DIR"], "count")
n = int(open(counter).read()) if os.path.exists(counter) else 0
with open(counter, "w") as f:
    f.write(str(n + 1))
every = int(os.environ.get("FLAKY_EVERY", "2"))
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error" if n % every == every - 1 else None
print(torch.compile(lambda x: torch.relu(x) + 1)(torch.randn(8)))
