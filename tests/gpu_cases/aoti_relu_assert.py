# EXPECT = {"failing_stage": "aoti_compile", "last_passing_stage": "decompose"}
"""A build step for deployment: a small MLP exported and AOT-compiled for CUDA into a package, with inductor's Triton
relu planted with a device-side assert (torch's own hook, "runtime_error": the kernel asserts its input is 0), as
PyTorch's AOTI minifier tests plant it. On CUDA, AOTInductor runs every kernel it generates once while compiling
(its autotuning code, on random inputs of the example's shapes), so the assert fires inside
aoti_compile_and_package, and the script sees "device-side assert triggered" at the next synchronisation, named by
no kernel (reprokit names it by the message the assert printed). (The package is not loaded here: with torch 2.11+cu130 on the device machine, loading any CUDA AOTI
package, a correct one too, ends in SIGSEGV inside torch's _load_aoti.)"""
import torch
import torch._inductor.config as inductor_config

inductor_config.triton.inject_relu_bug_TESTING_ONLY = "runtime_error"


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.sigmoid(torch.relu(self.fc(x)))


torch.manual_seed(0)
model = MLP().cuda().eval()
x = torch.randn(4, 8, device="cuda")
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep)
torch.cuda.synchronize()
print("packaged", path)
