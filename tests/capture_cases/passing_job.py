# A job that compiles and passes: a capture of it writes its summary and nothing else.
import torch

model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
compiled = torch.compile(model)
for _ in range(3):
    out = compiled(torch.randn(8, 16))
print("done", tuple(out.shape))
