"""`reprokit models`: what the model registry holds, with exact sizes (counted on the meta device)."""

from __future__ import annotations

from reprokit.app import guards
from reprokit.models.registry import REGISTRY, sizes


def list_models(tensor_parallel_gpus: int = 1) -> list:
    """One row per registry model: its shape, parameters in all and per rank, and its risk class."""
    guards.at_least_one("--tensor-parallel-gpus", tensor_parallel_gpus, "a number of GPUs")
    rows = []
    for name, f in REGISTRY.items():
        s = sizes(f, tensor_parallel_gpus)
        rows.append(
            {
                "model": name,
                "hidden": f["hidden"],
                "layers": f["layers"],
                "heads": f["heads"],
                "kv_heads": f["kv_heads"],
                "intermediate": f["intermediate"],
                "params": s["params_total"],
                "params_per_rank": s["params_per_rank"],
                "risk": s["risk"],
            }
        )
    return rows
