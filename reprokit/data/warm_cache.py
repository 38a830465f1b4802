"""Inductor's compiled-graph caches as a run's environment, and what a failure that needs them is called (plain
data: bisect/warm.py finds one, minify/warm_repro.py writes its repro)."""

from __future__ import annotations

from reprokit import settings

# A run of the script with inductor's caches on: the variable names torch reads at import, and the value for each.
CACHES = {"fx_graph_cache": "TORCHINDUCTOR_FX_GRAPH_CACHE", "autograd_cache": "TORCHINDUCTOR_AUTOGRAD_CACHE"}


PER_RANK = settings.CACHE_PER_RANK.name  # child/main.py: each rank of a launch its own folder under the cache folder
COMPILE_ERRORS = settings.COMPILE_ERRORS.name  # child/compile_errors.py: the run's C++ compile errors, replayed


def caches_on(caches) -> tuple:
    """The caches a run must have on for `caches` to show: the AOT autograd cache stores its entries through the FX
    graph cache, so it needs that one on too."""
    return tuple(CACHES) if "autograd_cache" in caches else tuple(caches)


def cache_env(folder: str, caches: tuple, per_rank: bool = False) -> dict:
    """The environment of a run whose inductor cache is `folder`, with `caches` on and the other off (and each rank
    in a folder of its own, when per_rank)."""
    env = {"TORCHINDUCTOR_CACHE_DIR": folder}
    env.update({var: "1" if name in caches else "0" for name, var in CACHES.items()})
    if per_rank:
        env[PER_RANK] = "1"
    return env


def describe(finding: dict) -> str:
    """One line for the verdict."""
    names = {"fx_graph_cache": "the FX graph cache", "autograd_cache": "the AOT autograd cache"}
    which = " and ".join(names[c] for c in finding["caches"])
    if finding.get("shared_by_ranks"):
        return (
            f"fails only when its ranks share one inductor cache ({which}): one rank loads what another stored; "
            f"with a cache per rank its first run passes, and with the caches off it passes"
        )
    if finding["when"] == "cold":
        return (
            f"fails only with inductor's caches on ({which}), on a cold cache already; with them off, as every "
            "other trial ran, it passes"
        )
    return (
        f"fails only when a run loads what an earlier run stored: {which} (a cold run passes, the warm run "
        f"after it fails); with the caches off it passes"
    )
