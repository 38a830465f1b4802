# A job ended before its first compile: it imports torch, says so, and waits (as a data loader that never starts).
import time

import torch

print(f"loaded torch {torch.__version__}", flush=True)
time.sleep(600)
print(torch.compile(lambda x: x + 1)(torch.ones(2)))
