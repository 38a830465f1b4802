"""Inductor's compiled-graph caches as a run's environment, and what a failure that needs them is called (plain
data: bisect/warm.py finds one, minify/warm_repro.py writes its repro)."""
from __future__ import annotations

# A run of the script with inductor's caches on: the variable names torch reads at import, and the value for each.
CACHES = {"fx_graph_cache": "TORCHINDUCTOR_FX_GRAPH_CACHE", "autograd_cache": "TORCHINDUCTOR_AUTOGRAD_CACHE"}


def cache_env(folder: str, caches: tuple) -> dict:
    """The environment of a run whose inductor cache is `folder`, with `caches` on and the other off."""
    env = {"TORCHINDUCTOR_CACHE_DIR": folder}
    env.update({var: "1" if name in caches else "0" for name, var in CACHES.items()})
    return env


def describe(finding: dict) -> str:
    """One line for the verdict."""
    names = {"fx_graph_cache": "the FX graph cache", "autograd_cache": "the AOT autograd cache"}
    which = " and ".join(names[c] for c in finding["caches"])
    if finding["when"] == "cold":
        return (f"fails only with inductor's caches on ({which}), on a cold cache already; with them off, as every "
                "other trial ran, it passes")
    return (f"fails only when a run loads what an earlier run stored: {which} (a cold run passes, the warm run "
            f"after it fails); with the caches off it passes")
