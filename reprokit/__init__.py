"""reprokit: from a failing torch.compile script to a minimal repro and an upstream-ready report."""

__version__ = "0.1.0"
