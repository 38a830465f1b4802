# EXPECT = {"failing_stage": "inductor", "kinds": ["crash", "exception"], "class": "inductor memory corruption", "issue": 196681, "repro_kinds": ["graph", "graph_in_context", "graph_in_script"], "max_nodes": 10, "max_lines": 50}
# pytorch/pytorch#196681: [inductor][cpu] the tiled reduction's tail writes a full vector past the output buffer (heap corruption)
# CLASS: inductor memory corruption
# WHY: CPU 2D-tiled reduction tail block does a full-width vector store past the output buffer -> process aborts with glibc heap corruption (SIGABRT, rc=134: "free(): invalid pointer" / "malloc(): unaligned tcache chunk"), sometimes after AssertionError: Tensor-likes are not close (max abs diff ~20)
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class ChannelMixer(nn.Module):
    """Toy token/channel mixing block operating on a channels_last feature map."""

    def __init__(self, pad_to: int = 66):
        super().__init__()
        self.pad_to = pad_to

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        # feats: (1, C, H, W) in channels_last
        act = (feats * 0.5) * (torch.erf(feats * 0.7071067811865476) + 1)  # exact GELU
        c = act.shape[1]
        extra = self.pad_to - c
        # (W, H, C, 1) padded on the channel axis -> (W, H, pad_to, 1)
        keys = F.pad(act.permute(3, 2, 1, 0), (0, 0, 0, extra), value=0.5)
        # (1, pad_to, H, W) padded on the channel axis
        queries = F.pad(act, (0, 0, 0, 0, 0, extra), value=0.5)
        return torch.matmul(queries, keys)


def main():
    torch.manual_seed(0)
    model = ChannelMixer(pad_to=66).eval()
    feats = torch.randn(1, 8, 66, 66).contiguous(memory_format=torch.channels_last)

    with torch.no_grad():
        expected = model(feats)
        compiled = torch.compile(model)
        actual = compiled(feats)

    print("max abs diff:", (actual - expected).abs().max().item())
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4)
    print("OK")


if __name__ == "__main__":
    main()
