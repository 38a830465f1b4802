"""The repro of a failure that needs a warm inductor cache (bisect/warm.py): the script itself, with a few lines at
its top that run it twice in fresh interpreters on one new cache. Verified the way the bisect found it: a cold run
that passes, then a warm one on the same cache that fails the same way, each in a fresh interpreter, and a run
without compile that passes. The script is not reduced: every cut would cost two runs of it."""

from __future__ import annotations

import ast
import dataclasses
import os
import time

from reprokit import settings
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.phases import Isolation, Repro
from reprokit.data.records import ReproAttempt, TrialSpec, text_hash
from reprokit.data.run_facts import RunFacts
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.data.warm_cache import CACHES, cache_env, caches_on, describe

RUN_VAR = settings.REPRO_CACHE_RUN.name  # set in the two runs the driver starts: the script proper runs, not the driver

DRIVER = """\
# {why}
# `python repro.py` runs it twice in fresh interpreters on one new inductor cache:
# {shows}. (reprokit)
import os as _os, shutil as _shutil, subprocess as _subprocess, sys as _sys, tempfile as _tempfile
if _os.environ.get("{run_var}") is None:
    _cache = _tempfile.mkdtemp(prefix="inductor-cache-")
    _env = dict(_os.environ, {run_var}="1", TORCHINDUCTOR_CACHE_DIR=_cache, {switches})
    try:
        for _run in ("cold", "warm"):
            _code = _subprocess.call([_sys.executable{launcher}, _os.path.abspath(__file__)] + _sys.argv[1:],
                                     env=_env)
            if _code:
                _sys.exit(f"the {{_run}} run failed (exit {{_code}}); its traceback is above")
    finally:
        _shutil.rmtree(_cache, ignore_errors=True)
    _sys.exit(0)
"""


def warm_source(script_text: str, caches: list, why: str, ranks: int = 1, cold: bool = False) -> str:
    """repro.py: the script, with the driver after its `from __future__` imports (which must come first)."""
    lines = script_text.splitlines(keepends=True)
    tree = ast.parse(script_text)
    future_end = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            future_end = node.end_lineno or 0  # (ast.parse sets it)
        elif not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and future_end == 0
            and node is tree.body[0]
        ):
            break
    on = caches_on(caches)  # the autograd cache alone would store nothing (AOT autograd cache bug #184694: it passed)
    switches = ", ".join(f"{var}={'1' if name in on else '0'!r}" for name, var in CACHES.items())
    launcher = f', "-m", "torch.distributed.run", "--standalone", "--nproc-per-node={ranks}"' if ranks > 1 else ""
    driver = DRIVER.format(
        why=why,
        run_var=RUN_VAR,
        switches=switches,
        launcher=launcher,
        shows="the first run fails already" if cold else "the first run passes, the second fails",
    )
    return "".join(lines[:future_end]) + driver + "".join(lines[future_end:])


def minify_warm(
    run_dir: RunDir, isolation: Isolation, facts: RunFacts, runner, emit, started: float, before: int
) -> Repro:
    """Write repro.py for a warm-cache failure and verify it (in the run's cwd, with its ranks); the Repro."""
    finding = isolation.warm_cache
    assert finding is not None  # asked only for a failure that needs a warm cache
    with open(isolation.script) as f:
        original = f.read()
    emit(Event.PHASE, name="repro")
    ranks = facts.ranks
    source = warm_source(original, finding["caches"], describe(finding), ranks, cold=finding["when"] == "cold")
    run_dir.write_text("repro.py", source)
    folder = run_dir.file("warm-cache", "verify")
    os.makedirs(folder, exist_ok=True)
    env = {**cache_env(folder, caches_on(finding["caches"])), RUN_VAR: "1"}
    base = TrialSpec(
        mode="script",
        stage="user",
        script=run_dir.file("repro.py"),
        cwd=facts.cwd,
        argv=tuple(isolation.argv),
        env=env,
        ranks=ranks,
        path_dirs=(os.path.dirname(isolation.script),),
        script_hash=text_hash(source),
        fresh_interpreter=True,
        label="verify-repro-cold",
    )
    shows, verified = verify_warm(runner, base, Signature.from_dict(isolation.signature), finding["when"])
    lines = len(original.strip().splitlines())
    why = "repro.py's cold and warm runs did not show the failure again"
    repro = Repro(
        kind="warm_cache" if verified else None,
        path=run_dir.file("repro.py"),
        verified=verified,
        signature=shows.signature.to_dict() if shows is not None else None,
        attempts=(ReproAttempt("warm_cache", "verified" if verified else why),),
        nodes_before=lines,
        nodes_after=lines,
        unit="lines",
        trials=runner.executed - before,
        seconds=round(time.monotonic() - started, 2),
        message=isolation.message,
    )
    emit(Event.MINIFIED, **{**repro.progress(), "unit": "warm"})  # the script whole, not reduced
    return repro


def verify_warm(runner, base: TrialSpec, target: Signature, when: str) -> tuple:
    """repro.py run cold, warm and without compile: (the run that should show the failure, verified). Verified when
    that run fails the same way, the run without compile passes and, for a warm failure, the cold run passes."""
    cold = runner(base)
    warm = runner(dataclasses.replace(base, attempt=1, label="verify-repro-warm"))
    plain = runner(dataclasses.replace(base, stage="none", label="verify-repro-no-compile", env={RUN_VAR: "1"}))
    shows = warm if when == "warm" else cold
    cold_passed = cold is not None and cold.kind == OutcomeKind.PASS
    verified = bool(
        shows is not None
        and target.matches(shows.signature)
        and plain is not None
        and plain.kind == OutcomeKind.PASS
        and (when == "cold" or cold_passed)
    )
    return shows, verified
