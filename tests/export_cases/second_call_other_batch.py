# EXPECT = {"failing_stage": "aoti_run", "last_passing_stage": "none"}
"""Exported with static shapes from a batch of 4, then called with a batch of 6 on the second call: the exported
program's guard rejects it, AOTInductor's package (no input checks by default) returns two rows of garbage. The
example input alone passes every stage: only the script's own second call shows it."""
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.fc(x))


torch.manual_seed(0)
model = MLP().eval()
with torch.no_grad():
    ep = torch.export.export(model, (torch.randn(4, 8),))
    path = torch._inductor.aoti_compile_and_package(ep)
    compiled = torch._inductor.aoti_load_package(path)
    for batch in (4, 6):
        x = torch.randn(batch, 8)
        torch.testing.assert_close(compiled(x), model(x))
print("ok")
