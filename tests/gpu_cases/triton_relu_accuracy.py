# A model on CUDA whose Triton relu kernel is planted with torch's own hook ("accuracy").
import torch
from _blocks import model

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "accuracy"
m = model().cuda()
x = torch.randn(64, 16, device="cuda")
expected = m(x)
actual = torch.compile(m)(x)
torch.cuda.synchronize()
assert torch.allclose(expected, actual, atol=1e-3), f"compiled differs: {(expected - actual).abs().max().item()}"
