"""One tiny op: Dynamo's guards and the compiled wrapper cost more than the op itself."""
import torch


def add_one(x):
    return x + 1


compiled = torch.compile(add_one)  # SITE
x = torch.ones(1)
for _ in range(200):
    compiled(x)
