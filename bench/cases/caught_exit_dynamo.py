"""A maintainer's script (issue 50, items 6-8): a docstring, main() behind the __main__ guard, a name never read,
and the compiled call in a try/except that prints and exits 1. `reprokit bisect bench/cases/caught_exit_dynamo.py`
should give a repro that raises the Unsupported uncaught, at top level, with none of those left."""
import sys

import numpy as np
import torch

torch.manual_seed(0)


@torch.compile(fullgraph=True)
def score(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y


def main():
    weights = np
    x = torch.randn(8)
    print("input", x.shape)
    try:
        out = score(x)
        print(out.sum())
    except Exception as e:
        print("scoring failed:", type(e).__name__)
        sys.exit(1)
    finally:
        pass


if __name__ == "__main__":
    main()
