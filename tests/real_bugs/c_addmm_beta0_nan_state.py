# EXPECT = {"failing_stage": "aot_eager_decomp_partition", "kinds": ["exception"], "class": "accuracy", "issue": 196596, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 6, "max_lines": 40, "op": "aten.addmm"}
# pytorch/pytorch#196596: [inductor] addmm with beta=0 still adds beta*input on CPU, so a NaN placeholder state propagates
# CLASS: accuracy
# WHY: Inductor's CPU addmm decomposition computes alpha*(a@b) + beta*input, so with beta=0 the NaN in the (uninitialized) input still propagates -> compiled output is all NaN vs finite eager values; AssertionError from assert_close
import torch
import torch.nn as nn


class RecurrentReadout(nn.Module):
    """Readout that blends a running state with a fresh projection.

    On the first step of a sequence the running state is uninitialized
    (here: NaN-filled placeholder), so it is given weight beta=0, which
    torch.addmm documents as "input is ignored, nan and inf in it are not
    propagated".
    """

    def __init__(self, in_features: int = 4, out_features: int = 4):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features))

    def forward(self, state: torch.Tensor, x: torch.Tensor, decay: float) -> torch.Tensor:
        return torch.addmm(state, x, self.weight, beta=decay)


def main():
    torch.manual_seed(0)
    readout = RecurrentReadout(4, 4).eval()

    # single sample (batch of 1), state not yet initialized
    x = torch.randn(1, 4)
    state = torch.full((4,), float("nan"))

    with torch.no_grad():
        expected = readout(state, x, 0.0)
        compiled = torch.compile(readout, fullgraph=True)
        actual = compiled(state, x, 0.0)

    print("eager   :", expected)
    print("compiled:", actual)
    torch.testing.assert_close(actual, expected)
    print("OK")


if __name__ == "__main__":
    main()
