"""What the capture records of the process it runs in: the script, the process group."""

from __future__ import annotations

import os
import sys


def process_group() -> dict | None:
    """The job's default process group: rank, world size, backend; None outside a distributed job."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return None
    return {"rank": dist.get_rank(), "world_size": dist.get_world_size(), "backend": str(dist.get_backend())}


def script_path() -> str | None:
    """The script this process runs (python script.py, torchrun's workers alike), or None."""
    script = sys.argv[0] if sys.argv else ""
    return os.path.abspath(script) if script.endswith(".py") and os.path.isfile(script) else None
