# EXPECT = {"failing_stage": "eager", "kinds": ["exception"], "issue": 160271, "repro_kinds": ["source"], "max_lines": 35, "class": "dynamic shapes / recompile (Dynamo guards)"}
# pytorch/pytorch#160271: torch.compile with dynamic=True getting error: tensor 'guidance' stride mismatch at index 0
# CLASS: dynamic shapes / recompile (Dynamo guards)
# WHY: dynamic=True still 0/1-specializes the size-1 batch of the warm-up call, so the batch-2 call fails the static size/stride guards and recompiles (the issue hits the expanded guidance stride guard; here the latents size guard fires first)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyFluxBlock(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.img_in = nn.Linear(16, dim)
        self.guidance_in = nn.Sequential(nn.Linear(1, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.attn = nn.MultiheadAttention(dim, num_heads=4, batch_first=True)
        self.out = nn.Linear(dim, 16)

    def forward(self, latents, guidance):
        h = self.img_in(latents)                                  # (B, T, D)
        g = self.guidance_in(guidance[:, None])                   # (B, D)
        h = h + g[:, None, :]
        h = h + self.attn(h, h, h, need_weights=False)[0]
        return self.out(h)


def denoise(model, batch, steps=2, guidance_scale=3.5):
    latents = torch.randn(batch, 8, 16)
    # like diffusers: one guidance value broadcast to the batch
    guidance = torch.full([1], guidance_scale).expand(latents.shape[0])
    for _ in range(steps):
        latents = latents - 0.1 * model(latents, guidance)
    return latents


model = TinyFluxBlock().eval()
model = torch.compile(model, dynamic=True)

with torch.no_grad(), torch._dynamo.config.patch(error_on_recompile=True):
    warm = denoise(model, batch=1)   # warm-up with one image
    out = denoise(model, batch=2)    # then two images per prompt: must not recompile

print(warm.shape, out.shape)
