# A job compiled and more accurate than eager: in float16, eager rounds (x + 2048) to a step of 2 before taking
# 2048 off again; inductor computes in float32 and rounds once. Against float64, compiled is the closer one.
import torch

torch.manual_seed(0)
f = torch.compile(lambda x: (x + 2048) - 2048 + x)
out = f(torch.randn(4096, dtype=torch.float16))
print("done", tuple(out.shape))
