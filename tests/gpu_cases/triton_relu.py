# A model on CUDA whose Triton relu kernel is planted with torch's own hook; the bug is the script's argument:
#   reprokit bisect triton_relu.py -- compile_error|runtime_error|accuracy
import sys

import torch
from _blocks import model

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = sys.argv[1]
m = model().cuda()
x = torch.randn(64, 16, device="cuda")
expected = m(x)
actual = torch.compile(m)(x)
torch.cuda.synchronize()
assert torch.allclose(expected, actual, atol=1e-3), f"compiled differs: {(expected - actual).abs().max().item()}"
