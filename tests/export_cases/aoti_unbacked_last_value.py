# EXPECT = {"failing_stage": "aoti_compile", "last_passing_stage": "decompose"}
"""The planted relu compile error (as in aoti_compile_error.py) on a boolean-mask selection: the exported program's
last value has a data-dependent size, so no cut of it can be written as a repro (no size hint to make an input)."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"


class Picked(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x[x > 0])


torch.manual_seed(0)
x = torch.randn(4, 8)
with torch.no_grad():
    ep = torch.export.export(Picked(), (x,))
    path = torch._inductor.aoti_compile_and_package(ep)
    torch._inductor.aoti_load_package(path)(x)
