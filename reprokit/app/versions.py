"""`reprokit versions RUN_DIR`: the run's failure under other torch releases, each in its own managed
environment; a table, what it concludes (fixed in, regression since), recorded in the verdict."""

from __future__ import annotations

import os
import sys
from importlib import metadata

from reprokit.app.common import noop
from reprokit.app.pack import write_pack
from reprokit.app.verdict_file import with_run
from reprokit.data.events import Emit, Event
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import ReprokitError
from reprokit.trial.launch import run_trial
from reprokit.versions import envs, releases
from reprokit.versions.check import check_release

TRIAL_TIMEOUT = 900.0


def _verdict(run_dir: RunDir) -> Verdict:
    recorded = run_dir.verdict()
    if recorded is None:
        raise ReprokitError(f"{run_dir.path} has no verdict.json: run reprokit bisect first")
    v = Verdict.from_dict(recorded)
    if not v.isolation.failing_stage or not v.isolation.signature:
        raise ReprokitError(f"{run_dir.path}: its bisect found no failure to look for in other torch releases")
    return v


def plan(run_dir: str | None, **choice) -> dict:
    """What a versions step will do, before it does it: the releases, which environments exist, the cost (choice:
    _plan's keywords). run_dir None: the plan of a step that will run after a bisect not yet made."""
    folder = RunDir.open(run_dir) if run_dir else None
    if folder is not None:
        _verdict(folder)
    return _plan(folder, **choice)


def _plan(
    folder: RunDir | None,
    torch_list: str | None = None,
    newest: bool = False,
    between: tuple | None = None,
    index_url: str | None = None,
    cache_dir: str | None = None,
) -> dict:
    cache_dir = cache_dir or envs.default_cache_dir()
    offered = releases.index_releases(index_url)
    user = releases.base(metadata.version("torch"))
    chosen = releases.choose(user, offered, torch_list, newest, between)
    missing = [
        r for r in chosen if r != user and not os.path.exists(os.path.join(cache_dir, f"torch-{r}", envs.MARKER))
    ]
    envs.check_space(cache_dir, missing)
    return {
        "run_dir": folder,
        "user": user,
        "offered": offered,
        "chosen": chosen,
        "missing": missing,
        "cache_dir": cache_dir,
        "index_url": index_url,
    }


def cost_line(p: dict) -> str:
    """The cost of a plan, in one line."""
    made = len(p["chosen"]) - 1 - len(p["missing"])
    return (
        f"versions: torch {', '.join(p['chosen'])}; {len(p['missing'])} new environment(s) of about "
        f"{envs.TYPICAL_GIB} GiB each (PyPI's wheels with CUDA libraries; under a minute each here) in "
        f"{p['cache_dir']}, {made} reused; then one run of the repro per release"
    )


def check_releases(
    run_dir: str,
    torch_list: str | None = None,
    newest: bool = False,
    between: tuple | None = None,
    bisect: bool = False,
    index_url: str | None = None,
    cache_dir: str | None = None,
    emit: Emit = noop,
) -> dict:
    """`reprokit versions RUN_DIR`: try the failure under each chosen release (and, with bisect, the releases
    between a passing and a failing one); write versions.json and the verdict's `versions`."""
    p = plan(run_dir, torch_list=torch_list, newest=newest, between=between, index_url=index_url, cache_dir=cache_dir)
    v = _verdict(p["run_dir"])
    result = _tried(p, v, bisect, emit)
    record_versions(p["run_dir"], v, result, emit)
    return result


def versions_after_bisect(run_dir: RunDir, verdict: Verdict, emit: Emit = noop) -> Verdict:
    """bisect --versions: the verdict it has, tried under the default releases, written (and repacked)."""
    result = _tried(_plan(run_dir), verdict, False, emit)
    return record_versions(run_dir, verdict, result, emit)


def _tried(p: dict, v: Verdict, bisect: bool, emit: Emit) -> dict:
    """The table of releases tried and what it concludes."""
    emit(Event.NOTE, text=cost_line(p))
    made = {r: _env(p, r, emit) for r in p["chosen"]}  # bad input (network, disk, release) before any trial
    rows = {r: _row(p, v, r, made[r], emit) for r in p["chosen"]}
    if bisect:
        _bisect(p, v, rows, emit)
    table = sorted(rows.values(), key=lambda r: releases.key(r["release"]))
    return {
        "user": p["user"],
        "rows": table,
        **releases.conclusions(table, p["user"]),
        "cache_dir": p["cache_dir"],
        "cache_bytes": envs.tree_bytes(p["cache_dir"]),
        "index_url": p["index_url"],
    }


def record_versions(run_dir: RunDir, verdict: Verdict, result: dict, emit: Emit) -> Verdict:
    """versions.json and the verdict's `versions`; a packed run is packed again."""
    run_dir.write_json("versions.json", result)
    verdict = with_run(run_dir, verdict, versions=result)
    if verdict.run.tarball:
        verdict = with_run(run_dir, verdict, tarball=write_pack(run_dir, emit=emit, verdict=verdict))
    return verdict


def _env(p: dict, release: str, emit: Emit) -> dict:
    """The environment of one release: this interpreter for the user's own, else the managed one."""
    if release == p["user"]:
        return {"python": sys.executable, "created": False, "seconds": 0.0, "bytes": 0, "this_interpreter": True}
    if release in p["missing"]:
        emit(Event.NOTE, text=f"torch {release}: making its environment")
    return envs.ensure_env(release, p["cache_dir"], p["index_url"])


def _row(p: dict, v: Verdict, release: str, env: dict, emit: Emit) -> dict:
    """One release: the check run in its environment."""
    trial_root = p["run_dir"].file("versions", f"torch-{release}")

    def run_one(spec, trial_dir, python):
        return run_trial(spec, trial_dir, os.path.join(trial_root, "cache"), TRIAL_TIMEOUT, python=python)

    checked = check_release(p["run_dir"], v, env["python"], trial_root, run_one)
    row = {
        "release": release,
        **checked,
        "env": {k: env.get(k) for k in ("created", "seconds", "bytes", "this_interpreter")},
    }
    emit(Event.VERSION, row=row)
    return row


def _bisect(p: dict, v: Verdict, rows: dict, emit: Emit) -> None:
    """Between each passing and failing pair of tried releases, every release offered between them is a
    candidate: a binary search names the last one on the passing side and the first on the failing side."""

    def status_of(release: str) -> str:
        if release not in rows:
            rows[release] = _row(p, v, release, _env(p, release, emit), emit)
        return rows[release]["status"]

    ordered = sorted(rows.values(), key=lambda r: releases.key(r["release"]))
    for lo, hi in releases.boundaries(ordered):
        left, right = releases.first_change(lo, hi, p["offered"], status_of)
        emit(
            Event.NOTE,
            text=f"bisect: torch {left} {releases.STATUS_TEXT[rows[left]['status']]}, torch {right} "
            f"{releases.STATUS_TEXT[rows[right]['status']]}",
        )


def clean(cache_dir: str | None = None) -> dict:
    """Remove every managed torch environment."""
    return envs.clean(cache_dir or envs.default_cache_dir())
