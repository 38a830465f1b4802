# EXPECT = {"failing_stage": "crashy_backend", "kinds": ["crash"], "exc_type": "SIGSEGV"}
# A real segfault inside the script's own backend.
import ctypes

import torch


def crashy_backend(gm, example_inputs):
    ctypes.string_at(0)
    return gm.forward


print(torch.compile(lambda x: x.cos() + 1, backend=crashy_backend)(torch.randn(4)))
