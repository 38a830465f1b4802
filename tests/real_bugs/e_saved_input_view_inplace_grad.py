# EXPECT = {"failing_stage": "inductor", "kinds": ["exception", "accuracy"], "issue": 197887, "repro_kinds": ["graph", "graph_in_context", "graph_in_script", "source"], "max_nodes": 12, "max_lines": 40, "class": "inductor wrong-result (accuracy) in backward"}
# pytorch/pytorch#197887: [inductor] Autograd's "modified by an inplace operation" check is lost when a view of a graph input is saved for backward: x @ w, bmm, einsum, 3-D F.linear silently return wrong gradients
# CLASS: inductor wrong-result (accuracy) in backward
# WHY: Inductor rebuilds the saved view of the input with _reinterpret_tensor, a new TensorImpl that does not share the input's version counter, so x.add_() between forward and backward is not detected and backward uses the mutated x
import sys
import torch
import torch.nn as nn

torch.manual_seed(0)


class Projection(nn.Module):
    def __init__(self, d_in=16, d_out=8):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        return self.proj(x).pow(2).mean()


model = Projection()
step = torch.compile(model)

batch = torch.randn(2, 5, 16)           # (batch, seq, features): 3-D linear
reference = batch.clone()

loss = step(batch)
batch.add_(1.0)                         # user reuses the batch buffer in place before backward

try:
    loss.backward()
except RuntimeError as e:
    if "modified by an inplace operation" in str(e):
        print("OK: autograd detected the in-place modification of the saved input")
        sys.exit(0)
    raise

# compiled path: no error was raised -- check whether the gradient is still correct
ref_model = Projection()
ref_model.load_state_dict(model.state_dict())
ref_model(reference).backward()
torch.testing.assert_close(model.proj.weight.grad, ref_model.proj.weight.grad)
print("gradients match")
