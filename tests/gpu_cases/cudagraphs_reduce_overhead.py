# mode="reduce-overhead" (CUDA graphs) with a planted Triton runtime error: cudagraphs is part of the search.
import torch
from _blocks import model

torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "compile_error"
m = model().cuda()
out = torch.compile(m, mode="reduce-overhead")(torch.randn(64, 16, device="cuda"))
torch.cuda.synchronize()
print(out.sum().item())
