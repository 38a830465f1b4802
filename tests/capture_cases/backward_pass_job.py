# A training loop whose backward alone fails to compile: inductor compiles a graph's backward at the first
# loss.backward(), and the script's custom post-grad pass (torch's own hook) refuses a graph that takes tangents,
# as a pass written for forward graphs might. The forward compiles and runs.
import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class ForwardOnlyPass(CustomGraphPass):
    def __call__(self, graph):
        if any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes):
            raise RuntimeError("forward-only pass given a backward graph")

    def uuid(self):
        return "forward-only-pass-v1"


torch._inductor.config.post_grad_custom_post_pass = ForwardOnlyPass()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)
for i in range(3):
    loss = step(torch.randn(4, 8)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    print("step", i, float(loss))
