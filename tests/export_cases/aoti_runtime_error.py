# EXPECT = {"failing_stage": "aoti_run", "last_passing_stage": "decompose"}
"""A small MLP exported and compiled ahead of time, with inductor's relu codegen planted to fail (runtime_error), the
way PyTorch's own AOTI minifier tests plant it."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.sigmoid(torch.relu(self.fc(x)))


torch.manual_seed(0)
model = MLP().eval()
x = torch.randn(4, 8)
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep)
    compiled = torch._inductor.aoti_load_package(path)
    torch.testing.assert_close(compiled(x), model(x))
print("ok")
