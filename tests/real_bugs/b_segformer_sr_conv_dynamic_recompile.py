# EXPECT = {"failing_stage": "inductor", "kinds": ["exception"], "class": "dynamic shapes", "issue": 188422, "repro_kinds": ["graph", "graph_in_script", "source"], "max_nodes": 30, "max_lines": 50, "op": "convolution"}
# pytorch/pytorch#188422: Some test_sdpa_can_compile_dynamic in transformers fail (with torch.compile(dynamic=True)) with torch 2.13 RC but pass with torch 2.12
# CLASS: dynamic shapes
# WHY: Segformer-style spatial-reduction conv on a token tensor reshaped back to (B, C, H, W), where H/W come from a strided patch-embedding conv; the first size compiles fine, but the automatic-dynamic recompile for a second image size dies in the convolution lowering with ValueRangeError "Invalid ranges [0:-1]"
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EfficientSelfAttention(nn.Module):
    def __init__(self, dim=16, sr_ratio=2):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.sr = nn.Conv2d(dim, dim, kernel_size=sr_ratio, stride=sr_ratio)
        self.norm = nn.LayerNorm(dim)

    def forward(self, tokens, h, w):
        b, n, c = tokens.shape
        q = self.q(tokens)
        # spatial reduction of keys / values
        grid = tokens.transpose(1, 2).reshape(b, c, h, w)
        reduced = self.sr(grid).flatten(2).transpose(1, 2)
        k, v = self.kv(self.norm(reduced)).chunk(2, dim=-1)
        return F.scaled_dot_product_attention(q.unsqueeze(1), k.unsqueeze(1), v.unsqueeze(1)).squeeze(1)


class TinySegformerStage(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, kernel_size=7, stride=4, padding=3)
        self.norm = nn.LayerNorm(dim)
        self.attn = EfficientSelfAttention(dim)

    def forward(self, img):
        x = self.patch(img)
        b, c, h, w = x.shape
        tokens = self.norm(x.flatten(2).transpose(1, 2))
        return tokens + self.attn(tokens, h, w)


model = TinySegformerStage().eval()
compiled = torch.compile(model)

with torch.no_grad():
    for size in (32, 48):  # second size triggers the dynamic-shape recompile
        img = torch.randn(2, 3, size, size)
        torch.testing.assert_close(compiled(img), model(img), rtol=1e-4, atol=1e-4)
        print("size", size, "ok")
