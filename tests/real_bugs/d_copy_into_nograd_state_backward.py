# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exception"], "class": "ahead_of_time_backward_error", "issue": 158561, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 12, "max_lines": 30}
# pytorch/pytorch#158561: [aot_autograd] copy_() of a grad-requiring result into a no-grad input raises an autograd in-place error at compile time
# CLASS: ahead_of_time_backward_error
# WHY: AOTAutograd traces the backward eagerly, finds the input saved by the Linear was overwritten by copy_, and raises "one of the variables needed for gradient computation has been modified by an inplace operation" while eager's forward just runs
import torch
import torch.nn as nn

torch.manual_seed(0)


class RecurrentCell(nn.Module):
    """Tiny recurrent cell that updates a caller-owned state buffer in place."""

    def __init__(self, dim):
        super().__init__()
        self.mix = nn.Linear(dim, dim)
        self.inp = nn.Linear(dim, dim)

    def forward(self, x, state):
        new_state = torch.tanh(self.mix(state) + self.inp(x))
        state.copy_(new_state)  # write back into the preallocated buffer
        return state


def rollout(cell, xs, state):
    outs = []
    for t in range(xs.shape[0]):
        outs.append(cell(xs[t], state).clone())
    return torch.stack(outs)


dim, steps = 8, 3
cell = RecurrentCell(dim)
xs = torch.randn(steps, 2, dim)

# eager reference (parameters require grad, the state buffer does not)
state_ref = torch.zeros(2, dim)
expected = rollout(cell, xs, state_ref)

compiled_cell = torch.compile(cell, backend="aot_eager")
state = torch.zeros(2, dim)
actual = rollout(compiled_cell, xs, state)

torch.testing.assert_close(actual, expected)
torch.testing.assert_close(state, state_ref)
print("OK")
