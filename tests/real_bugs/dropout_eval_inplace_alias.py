# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exception"], "class": "input mutation", "issue": 195422, "repro_kinds": ["graph", "graph_in_script", "source"], "max_nodes": 6, "max_lines": 30}
# pytorch/pytorch#195422: [inductor] torch.compile silently drops an in-place mutation of an input made through F.dropout's identity return
# CLASS: input mutation
# WHY: in eval mode F.dropout returns its input itself; an in-place op on that alias must update the caller's tensor, but compiled code never writes it back
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ScaleInPlace(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = 0.1

    def forward(self, h):
        y = F.dropout(h, self.p, self.training)  # eval: y *is* h
        y.mul_(0.5)                               # in-place: scales the caller's activation buffer
        return y


m = ScaleInPlace().eval()
h0 = torch.randn(3, 5)

h_eager = h0.clone()
out_eager = m(h_eager)

h_comp = h0.clone()
out_comp = torch.compile(m, backend="inductor")(h_comp)

torch.testing.assert_close(out_comp, out_eager)
print("input after eager call   :", h_eager[0, :3].tolist())
print("input after compiled call:", h_comp[0, :3].tolist())
torch.testing.assert_close(h_comp, h_eager,
                           msg=lambda m: "compiled module did not apply the in-place update to its input:\n" + m)
print("OK")
