"""A passing job for the capture's overhead (bench/capture_overhead.sh): a compiled MLP trained for a few hundred
steps on the CPU, forward and backward, so that per-call costs show as well as the start-up's."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(model)
x, y = torch.randn(64, 256), torch.randn(64, 256)
for _ in range(int(__import__("os").environ.get("STEPS", "400"))):
    loss = torch.nn.functional.mse_loss(step(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("loss", round(loss.item(), 4))
