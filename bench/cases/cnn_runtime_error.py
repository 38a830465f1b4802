# A small CNN (conv, batch norm, relu, pooling, a linear head) with inductor's C++ relu kernel made to raise at run
# time by PyTorch's own hook: the held-out case of issue #16.
import torch
import torch.nn as nn

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


torch.manual_seed(0)
model = CNN().eval()
with torch.no_grad():
    out = torch.compile(model)(torch.randn(2, 3, 16, 16))
print(out.sum())
