# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "backward-only", "issue": 185509, "repro_kinds": ["graph", "graph_in_script", "source"], "max_nodes": 25, "max_lines": 45}
# pytorch/pytorch#185509: [inductor] Silent incorrect gradients with interpolate, conv2d, max_pool2d and torch.where
# CLASS: backward-only
# WHY: forward matches eager, but inductor's backward for interpolate->slice->conv2d->max_pool2d->where produces gradients off by O(10-100)
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


def run(fn, dtype=torch.float32):
    x, w, b = (t.detach().to(dtype).requires_grad_(True) for t in (x0, w0, b0))
    out = fn(x, w, b, mask)
    out.sum().backward()
    return out.detach().double(), x.grad.double(), w.grad.double(), b.grad.double()


eager = run(head)
compiled = run(torch.compile(head, backend="inductor"))
ref = run(head, torch.float64)

names = ["out", "x.grad", "w.grad", "b.grad"]
for n, e, c, r in zip(names, eager, compiled, ref):
    print(f"{n:7s} err vs fp64: eager={(e - r).abs().max():.2e} compiled={(c - r).abs().max():.2e}")
torch.testing.assert_close(compiled[0], eager[0], rtol=1e-4, atol=1e-4, msg="forward mismatch")
for n, e, c in zip(names[1:], eager[1:], compiled[1:]):
    torch.testing.assert_close(c, e, rtol=1e-4, atol=1e-4, msg=lambda m, n=n: f"compiled {n} is wrong:\n" + m)
print("OK")
