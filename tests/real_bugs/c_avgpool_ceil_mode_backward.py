# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "backward-only", "issue": 198119, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 8, "max_lines": 40, "op": "avg_pool2d_backward"}
# pytorch/pytorch#198119: [inductor] avg_pool2d backward with ceil_mode divides the partial last window by the full kernel area
# CLASS: backward-only
# WHY: avg_pool2d_backward lowering divides the overhanging ceil_mode window by the full kernel area -> compiled gradients wrong (AssertionError: Tensor-likes are not close on images.grad, max abs diff ~3e-3; conv weight grad off ~2e-2) while forward logits match
import copy

import torch
import torch.nn as nn


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, kernel_size=3, padding=1)
        self.act = nn.ReLU()
        self.pool = nn.AvgPool2d(kernel_size=3, stride=2, ceil_mode=True)
        self.head = nn.Linear(8 * 3 * 3, 10)

    def forward(self, x):
        x = self.pool(self.act(self.conv(x)))
        return self.head(x.flatten(1))


def grads(model, images, labels):
    images = images.detach().clone().requires_grad_(True)
    logits = model(images)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    return logits.detach(), images.grad, model.conv.weight.grad


def main():
    torch.manual_seed(0)
    eager_model = SmallConvNet()
    compiled_model = copy.deepcopy(eager_model)
    compiled_fn = torch.compile(compiled_model)

    images = torch.randn(4, 3, 6, 6)
    labels = torch.randint(0, 10, (4,))

    ref_logits, ref_gin, ref_gw = grads(eager_model, images, labels)
    got_logits, got_gin, got_gw = grads(compiled_fn, images, labels)

    torch.testing.assert_close(got_logits, ref_logits, rtol=1e-4, atol=1e-5)
    print("forward matches")
    print("max |d input| diff :", (got_gin - ref_gin).abs().max().item())
    print("max |d weight| diff:", (got_gw - ref_gw).abs().max().item())
    torch.testing.assert_close(got_gin, ref_gin, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got_gw, ref_gw, rtol=1e-4, atol=1e-5)
    print("OK")


if __name__ == "__main__":
    main()
