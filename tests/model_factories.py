"""A user model factory for `reprokit pack --model model_factories:relu_mlp` (returns model and inputs)."""

import torch


def relu_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    return model, (torch.randn(8, 16),)
