# EXPECT = {"failing_stage": "inductor", "kinds": ["exit"], "class": "wrong_grad", "issue": 186799, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 6, "max_lines": 30}
# pytorch/pytorch#186799: [inductor] gradient of atan2(...).amin(dim) drops the selected element's grad on CPU
# CLASS: wrong_grad
# WHY: the forward amin and the backward's recomputed atan2 take different CPU libm paths, so the exact-equality mask in amin's backward misses the argmin -> grad 0 instead of the eager value; forward matches, the script's grad check exits 1
import sys

import torch
import torch.nn as nn


class MinHeadingLoss(nn.Module):
    """Penalises the smallest heading angle among each object's candidate directions."""

    def forward(self, dy, dx):
        heading = torch.atan2(dy, dx)          # (objects, candidates)
        return heading.amin(dim=-1).sum()


def run(model, dy0, dx):
    dy = dy0.detach().clone().requires_grad_(True)
    loss = model(dy, dx)
    loss.backward()
    return loss.detach(), dy.grad


def main():
    torch.manual_seed(0)
    dy0 = torch.randn(2, 3)
    dx = torch.randn(2, 3)

    model = MinHeadingLoss()
    ref_loss, ref_grad = run(model, dy0, dx)
    got_loss, got_grad = run(torch.compile(model), dy0, dx)

    torch.testing.assert_close(got_loss, ref_loss)
    print("forward matches:", ref_loss.item())
    print("eager grad   :", ref_grad.flatten().tolist())
    print("compiled grad:", got_grad.flatten().tolist())
    if not torch.allclose(got_grad, ref_grad, rtol=1e-5, atol=1e-6):
        print("gradient mismatch, max diff", (got_grad - ref_grad).abs().max().item())
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
