# EXPECT = {"failing_stage": "inductor", "kinds": ["accuracy"], "args": ["--check-accuracy"], "fixed_in": "2.14.1"}
# pytorch/pytorch#185509 without the script's own check: inductor's backward of interpolate -> slice -> conv2d ->
# max_pool2d -> where gives gradients off by O(10); the forward is right, so only --check-accuracy's gradient
# comparison can see it. Fixed by torch 2.14.1 (its gradients match eager's to 1e-5; 2.14.0 not tried).
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def features(x, w, b):
    y = F.interpolate(x, scale_factor=(1.5, 1.25), mode="bilinear", align_corners=False)
    y = y[:, :, 1:7, 1:8]
    conv = F.conv2d(y, w, b, padding=1)
    pool = F.max_pool2d(conv, kernel_size=3, stride=1, padding=1)
    return conv, pool


def head(x, w, b, mask):
    conv, pool = features(x, w, b)
    return torch.where(mask, conv, pool)


x0 = torch.randn(2, 3, 6, 8)
w0 = torch.randn(4, 3, 3, 3)
b0 = torch.randn(4)
with torch.no_grad():
    c, p = features(x0, w0, b0)
    mask = c > p.mean(dim=(2, 3), keepdim=True)

x, w, b = (t.detach().requires_grad_(True) for t in (x0, w0, b0))
out = torch.compile(head)(x, w, b, mask)
out.sum().backward()
print("grad norms", x.grad.norm().item(), w.grad.norm().item(), b.grad.norm().item())
