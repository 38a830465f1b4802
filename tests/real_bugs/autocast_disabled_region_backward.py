# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exception"], "class": "context-dependent", "issue": 179804, "repro_kinds": ["graph_in_context", "graph_in_script"], "max_nodes": 12, "max_lines": 35}
# pytorch/pytorch#179804: torch.compile + aot_eager: backward ignores inner autocast(enabled=False) vs eager
# CLASS: context-dependent
# WHY: under an outer CPU bf16 autocast, a compiled fp32 region (inner autocast(enabled=False)) gets its backward traced under the outer autocast, so the matmul grads are computed in bf16 while eager computes them in fp32
import torch

torch.manual_seed(0)

proj = torch.nn.Linear(64, 64)


def fp32_head(h):
    # numerically sensitive head: force full precision even inside an autocast region
    with torch.autocast("cpu", enabled=False):
        return h.float() @ proj.weight.float().T


def grads(fn, h):
    proj.weight.grad = None
    h = h.detach().clone().requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = fn(h)
    out.square().sum().backward()     # backward outside autocast, as recommended
    return h.grad.double(), proj.weight.grad.double()


h0 = torch.randn(8, 64, dtype=torch.bfloat16)
gh_e, gw_e = grads(fp32_head, h0)
gh_c, gw_c = grads(torch.compile(fp32_head, backend="inductor"), h0)

# float64 reference of the same math
hd = h0.double().requires_grad_(True)
wd = proj.weight.detach().double().requires_grad_(True)
(hd @ wd.T).square().sum().backward()
print("weight-grad max err vs fp64: eager=%.3e compiled=%.3e" %
      ((gw_e - wd.grad).abs().max(), (gw_c - wd.grad).abs().max()))
torch.testing.assert_close(gw_c, gw_e, rtol=1e-5, atol=1e-5,
                           msg=lambda m: "compiled weight grad differs (bf16 backward inside autocast(enabled=False)):\n" + m)
torch.testing.assert_close(gh_c, gh_e, rtol=1e-5, atol=1e-5)
print("OK")
