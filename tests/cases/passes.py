# EXPECT = {"exit_code": 3}
import torch

print(torch.compile(lambda x: x.sin() * 2)(torch.randn(8)))
