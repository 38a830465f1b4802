# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exit"], "class": "backward-only", "issue": 91468, "repro_kinds": ["source"], "max_lines": 40}
# pytorch/pytorch#91468: [aot autograd] a hook registered on an output of a compiled graph gets None instead of its gradient
# CLASS: backward-only
# WHY: backward-only: a Tensor.register_hook on a feature map returned by the compiled model receives None instead of dL/dfmap (AOTAutograd routes the logits' gradient inside one compiled node), so Grad-CAM gets no gradient
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        )
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        fmap = self.features(x)
        logits = self.classifier(fmap.mean(dim=(2, 3)))
        return logits, fmap


def grad_cam(model, images, target_class):
    logits, fmap = model(images)
    grads = {}
    fmap.register_hook(lambda g: grads.__setitem__("fmap", g))
    logits[:, target_class].sum().backward()
    if grads.get("fmap") is None:
        return None
    weights = grads["fmap"].mean(dim=(2, 3), keepdim=True)
    return torch.relu((weights * fmap).sum(dim=1)).detach()


net = SmallCNN()
images = torch.randn(2, 3, 16, 16)

expected = grad_cam(net, images, target_class=1)
net.zero_grad()
actual = grad_cam(torch.compile(net), images, target_class=1)

if actual is None:
    print("feature-map gradient hook got no gradient under torch.compile")
    sys.exit(1)
torch.testing.assert_close(actual, expected)
print("OK")
