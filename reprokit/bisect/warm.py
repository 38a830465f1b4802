"""The warm-cache rung (issue #32): reprokit's trials run with inductor's compiled-graph caches off, so a failure that
shows only when a run loads what an earlier run stored (the FX graph cache, the AOT autograd cache) passes in every
trial. Asked when the original passes, before "nothing to isolate": the script twice on one fresh cache, cold then
warm, and, when the warm run fails, which cache it takes."""

from __future__ import annotations

import os
import re

from reprokit.data.events import Event
from reprokit.data.records import Outcome, StageResult
from reprokit.data.warm_cache import CACHES, cache_env, caches_on

# The ladder rows' words for each way the rung runs the script.
TITLES = {"both": "FX graph + AOT autograd", "per_rank": "one per rank", "fx_graph_cache": "FX graph cache only"}


def cold_then_warm(s, name: str, caches: tuple, per_rank: bool = False, warm: bool = True) -> tuple:
    """(cold, warm): the script twice on one fresh cache folder, one run after the other (warm None when not
    asked, or when the cold run failed already: a warm run cannot tell more, and a long job's run is costly)."""
    folder = s.runner.run_dir.file("warm-cache", name)
    os.makedirs(folder, exist_ok=True)
    if not per_rank:  # (a cache per rank asks whether one rank loads what another stored: nothing shared there)
        seed_with_kernels(folder, os.path.join(s.runner.cache_root, "inductor"))
    env = cache_env(folder, caches, per_rank)
    runs: list[tuple[str, Outcome]] = []
    for when in ("cold", "warm") if warm else ("cold",):
        outcome = s.runner(s.spec("user", f"cache-{when}-{name}", env=env, attempt=len(runs)))
        title = f"{when} cache, {TITLES[name]}"
        runs.append((title, outcome))
        s.emit(Event.STAGE, stage=title, outcome=outcome, same=outcome.failed)  # what fails here is the failure
        if outcome.failed:
            break
    s.warm_cache_runs += runs
    return runs[0][1], runs[1][1] if len(runs) > 1 else None


# What the cold run's cache starts with: inductor's kernel folders (named by two characters of each kernel's hash)
# and the vector-ISA probe builds (a 52-character key). These are keyed by their full source, as every trial shares
# them (trial/cache.py), so they cannot hide a codegen bug; every trial has loaded kernels this way already. The
# compiled-graph caches the rung asks about (fxgraph/, aotautograd/) and anything else start empty: the cold run
# is cold for them. Measured: a passing script's cold run 17.4 s without, where the plain run takes 2.8 s.
_KERNEL_FOLDER = re.compile(r"[a-z0-9]{2}|c[a-z0-9]{51}|locks")


def seed_with_kernels(folder: str, shared: str) -> None:
    """Link the shared kernel folders into a fresh cache folder (see _KERNEL_FOLDER)."""
    try:
        names = os.listdir(shared)
    except OSError:
        return
    for name in names:
        target, link = os.path.join(shared, name), os.path.join(folder, name)
        if _KERNEL_FOLDER.fullmatch(name) and os.path.isdir(target) and not os.path.lexists(link):
            os.symlink(target, link)


def warm_ladder(runs: list, target) -> list:
    """The rung's runs as the verdict's ladder rows."""
    return [
        StageResult(title, o.kind, o.signature.short(), round(o.seconds, 2), target.matches(o.signature))
        for title, o in runs
    ]


def warm_rung(s) -> tuple[dict | None, Outcome | None]:
    """(finding, the failing run) when the script fails only with inductor's caches on; (None, None) otherwise.
    finding: which caches ("fx_graph_cache", or "autograd_cache" when the FX graph cache alone passes warm), whether
    the cold run failed already, and the environment that shows it (plain data for the verdict)."""
    s.emit(Event.PHASE, name="warm-cache")
    both = tuple(CACHES)
    cold, warm = cold_then_warm(s, "both", both)
    failing = cold if cold.failed else warm if warm is not None and warm.failed else None
    if failing is None:
        return None, None
    caches, shared = both, False
    if s.opts.ranks > 1 and cold.failed:
        # A rank may load what another rank stored in the same run (pytorch/pytorch#188332): a folder per rank.
        own_cold, _ = cold_then_warm(s, "per_rank", both, per_rank=True, warm=False)
        shared = not own_cold.failed
    if not shared and not cold.failed:  # (shared: which cache matters less than that the ranks share it)
        # The autograd cache stores its entries through the FX graph cache: the FX graph cache is asked alone.
        fx_cold, fx_warm = cold_then_warm(s, "fx_graph_cache", ("fx_graph_cache",))
        if not fx_cold.failed and fx_warm.failed and warm.signature.matches(fx_warm.signature):
            caches = ("fx_graph_cache",)
        elif not fx_cold.failed and not fx_warm.failed:
            caches = ("autograd_cache",)
    finding = {
        "caches": list(caches),
        "when": "cold" if cold.failed else "warm",
        "shared_by_ranks": shared,
        "env": cache_env("<a fresh folder>", caches_on(caches)),
        "cold": cold.signature.short(),
        "warm": warm.signature.short() if warm is not None else None,
    }
    return finding, failing
