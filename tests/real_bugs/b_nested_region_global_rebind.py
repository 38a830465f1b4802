# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "class": "Dynamo error", "issue": 191821, "repro_kinds": ["source"], "max_nodes": 15, "max_lines": 30}
# pytorch/pytorch#191821: [nested compile region] silently incorrect result on global mutation
# CLASS: Dynamo error
# WHY: a torch.compiler.nested_compile_region that reads a module-level global which the caller rebinds on every loop iteration is traced once and reused, so Dynamo keeps the first iteration's value (wrong result even with backend="eager")
from dataclasses import dataclass

import torch

torch.manual_seed(0)


@dataclass
class LayerState:
    hidden: torch.Tensor
    scale: float


state = LayerState(torch.zeros(4), 1.0)
weight = torch.randn(4, 4)


@torch.compiler.nested_compile_region
def layer():
    # repeated block: reads its input from the shared `state` object
    return torch.tanh(state.hidden @ weight) * state.scale + state.hidden


def run_stack(x, num_layers=3):
    global state
    for i in range(num_layers):
        state = LayerState(x, 1.0 + i)
        x = layer()
    return x


x = torch.randn(4)
expected = run_stack(x)
actual = torch.compile(run_stack, backend="eager", fullgraph=True)(x)
torch.testing.assert_close(actual, expected)
print("ok", actual)
