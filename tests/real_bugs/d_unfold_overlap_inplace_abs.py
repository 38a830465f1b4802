# EXPECT = {"failing_stage": "aot_eager", "kinds": ["exception"], "class": "functionalization_overlap_error", "issue": 165409, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 8, "max_lines": 30}
# pytorch/pytorch#165409: [functionalization] in-place abs_ on an overlapping unfold view is rejected under torch.compile although eager runs it
# CLASS: functionalization_overlap_error
# WHY: AOTAutograd functionalization bans mutating a view with internal overlap and raises "functionalization encountered a tensor being mutated that has internal overlap" while eager computes the result
import torch
import torch.nn as nn

torch.manual_seed(0)


class FrameEnergy(nn.Module):
    """Splits a signal into overlapping frames, rectifies them, returns per-frame energy."""

    def __init__(self, win=4, hop=2):
        super().__init__()
        self.win = win
        self.hop = hop
        self.proj = nn.Linear(win, 1, bias=False)

    def forward(self, signal):
        x = signal * 2.0
        frames = x.unfold(-1, self.win, self.hop)  # hop < win: frames share samples
        frames = frames.abs_()                     # rectify in place
        return self.proj(frames).squeeze(-1)


model = FrameEnergy().eval()
signal = torch.randn(2, 10)

with torch.no_grad():
    expected = model(signal)
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    actual = compiled(signal)

torch.testing.assert_close(actual, expected)
print("OK")
