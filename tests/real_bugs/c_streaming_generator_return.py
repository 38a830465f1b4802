# EXPECT = {"failing_stage": "eager", "kinds": ["exit"], "class": "Dynamo error", "issue": 198190, "repro_kinds": ["source"], "max_lines": 50}
# pytorch/pytorch#198190: [dynamo] a generator created inside a compiled forward comes back exhausted: its return value is lost
# CLASS: Dynamo error
# WHY: a generator created inside the compiled forward comes back as an exhausted tuple_iterator, so StopIteration.value (the generator's return value) is silently None
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)

CHUNK = 4


class ChunkedScorer(nn.Module):
    """Scores a long sequence chunk by chunk and streams the results."""

    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.score = nn.Linear(dim, 1)

    def forward(self, seq):
        def stream():
            seen = 0
            for chunk in seq.split(CHUNK):
                h = torch.relu(self.proj(chunk))
                yield self.score(h).squeeze(-1)
                seen += chunk.shape[0]
            return seen  # number of rows scored

        return stream()


def drain(gen):
    scores = []
    while True:
        try:
            scores.append(next(gen))
        except StopIteration as stop:
            return torch.cat(scores), stop.value


model = ChunkedScorer().eval()
seq = torch.randn(10, 16)

with torch.no_grad():
    ref_scores, ref_count = drain(model(seq))
    cmp_scores, cmp_count = drain(torch.compile(model)(seq))

torch.testing.assert_close(cmp_scores, ref_scores)
print("rows scored: eager =", ref_count, " compiled =", cmp_count)
if cmp_count != ref_count:
    print("generator return value lost under torch.compile")
    sys.exit(1)
print("OK")
