# EXPECT = {"exit_code": 4, "failing_stage": "inductor", "kinds": ["exception"], "exc_type": "AssertionError", "config": {"emulate_precision_casts": True}}
# PyTorch's bisector test test_emulate_precision_casts (test/dynamo/test_compiler_bisector.py), on CPU: an FP8 scale
# computed from bfloat16. Eager rounds 448 / amax to bfloat16 before the float32 cast; inductor fuses the two and
# keeps float32, so torch.equal fails (96.0 against 96.2148). Compiled is the more accurate one; the config that
# gives eager's bits back is inductor's emulate_precision_casts.
import torch


def calculate_scale(inp):
    amax = torch.abs(torch.max(inp))
    scale = 448.0 / torch.clamp(amax, min=1e-12)
    scale = scale.to(torch.float32)
    return scale


torch.manual_seed(0)
inp = torch.randn(16, 16, 768, dtype=torch.bfloat16)
eager_scale = calculate_scale(inp)
compile_scale = torch.compile(calculate_scale)(inp)
assert torch.equal(eager_scale, compile_scale), f"scale {compile_scale.item()} compiled, {eager_scale.item()} eager"
