# A job with no check of its own: a small model trained a few steps, its loss printed. Inductor's C++ relu is
# planted to be wrong (relu(x) + 1), so the loss drifts and nothing raises: --check-accuracy finds graph 0.
import torch

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
step = torch.compile(model)
x, y = torch.randn(8, 16), torch.randn(8, 4)
with torch.no_grad():
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(step(x), y)
print("loss", round(loss.item(), 4))
