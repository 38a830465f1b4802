# A planted inductor bug (the relu lowering's C++ compile error) in a script whose run without compile never ends:
# reprokit's no-compile baseline (it sets TORCHDYNAMO_DISABLE=1) hangs where the compiled run raises. A hang is not
# the original's failure, so it is no "fails without compile too".
import os
import time

import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
f = torch.compile(lambda x: torch.relu(x) + 1)
if os.environ.get("TORCHDYNAMO_DISABLE") == "1":
    while True:
        time.sleep(0.5)
print(f(torch.randn(8)))
