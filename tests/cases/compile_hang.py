# EXPECT = {"failing_stage": "inductor", "kinds": ["hang"], "timeout": 40}
# Inductor's own test hook makes its compile sleep far past any sane timeout.
import torch

torch._inductor.config.sleep_sec_TESTING_ONLY = 10_000
print(torch.compile(lambda x: x.sin() * 2)(torch.randn(8)))
