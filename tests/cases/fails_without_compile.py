# EXPECT = {"exit_code": 3}
import torch

x = torch.compile(lambda x: x * 2)(torch.randn(3))
raise ValueError("the script's own bug, compiled or not")
