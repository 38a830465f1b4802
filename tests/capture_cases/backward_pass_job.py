# A training loop whose backward alone fails to compile: inductor compiles a graph's backward at the first
# loss.backward(), and the script's custom post-grad pass (torch's own hook) refuses a backward graph with a matrix
# product, as a pass written for forward graphs might. The forwards compile and run. Two graphs: the model's (whose
# backward has the products) and the loss head's after it (whose backward has none, and runs first): the graph to
# capture is the model's, not the latest one called. The script catches the error, logs it and exits: the capture
# sees it all the same.
import sys

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass


class ForwardOnlyPass(CustomGraphPass):
    def __call__(self, graph):
        backward = any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes)
        if backward and any("aten.mm" in str(n.target) for n in graph.nodes):
            raise RuntimeError("forward-only pass given a backward graph")

    def uuid(self):
        return "forward-only-pass-v2"


torch._inductor.config.post_grad_custom_post_pass = ForwardOnlyPass()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = torch.compile(model)
head = torch.compile(lambda y: y.pow(2).mean() * 2)
for i in range(3):
    loss = head(step(torch.randn(4, 8)))
    try:
        loss.backward()
    except RuntimeError as e:  # as a training framework does: the error logged, the job ended
        print(f"backward failed at step {i}: {e}", file=sys.stderr)
        sys.exit(1)
    opt.step()
    opt.zero_grad()
    print("step", i, float(loss))
