"""Run one run folder's failure under another torch: its verified repro.py, or, without one, the original script
without torch.compile and then as written. Judge it with the same-signature check bisect uses."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from reprokit.data.kinds import OutcomeKind
from reprokit.data.records import Outcome, TrialSpec, file_hash
from reprokit.data.rundir import RunDir
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict

# A trial runs one spec under one interpreter: (spec, trial dir, python) -> Outcome.
RunOne = Callable[[TrialSpec, str, str], Outcome]
_CANNOT_IMPORT = ("ImportError", "ModuleNotFoundError")


def repro_spec(run: RunDir, v: Verdict) -> TrialSpec | None:
    """The spec minify verified repro.py with (from the journal), pointed at this folder's repro.py."""
    if not (v.repro.verified and run.exists("repro.py")):
        return None
    recorded = [e["spec"] for e in run.journal() if e.get("spec") and e.get("label") == "verify-repro-0"]
    base = TrialSpec.from_dict(recorded[-1]) if recorded else TrialSpec(mode="script", stage="user")
    return dataclasses.replace(
        base,
        script=run.file("repro.py"),
        cwd=run.path,
        script_hash=file_hash(run.file("repro.py")),
        fresh_interpreter=True,
        attempt=0,
        label="versions-repro",
    )


def script_specs(v: Verdict, cwd: str) -> tuple[TrialSpec, TrialSpec]:
    """The original script without torch.compile, then as written."""
    common: dict[str, Any] = dict(
        mode="script",
        script=v.isolation.script,
        argv=tuple(v.isolation.argv or ()),
        cwd=cwd,
        script_hash=file_hash(v.isolation.script),
        fresh_interpreter=True,
    )
    return (
        TrialSpec(stage="none", label="versions-no-compile", **common),
        TrialSpec(stage="user", label="versions-compiled", **common),
    )


def target_of(v: Verdict, repro: bool) -> Signature | None:
    """The failure to recognise: repro.py's own signature when it is the check, else the run's."""
    data = v.repro.signature if repro and v.repro.signature else v.isolation.signature
    return Signature.from_dict(data) if data else None


def _own_check_failed(sig: Signature) -> bool:
    """The repro's accuracy assertion (or the router's accuracy check) failed."""
    return sig.kind == OutcomeKind.ACCURACY or (sig.kind == OutcomeKind.EXCEPTION and sig.exc_type == "AssertionError")


def judge(outcome: Outcome, target: Signature | None) -> tuple[str, str]:
    """(status, detail): same | passes | different | cannot_run, as bisect's same-signature check sees it."""
    sig = outcome.signature
    if not outcome.failed:
        return "passes", "passes"
    if sig.exc_type in _CANNOT_IMPORT:
        return "cannot_run", sig.short()
    if target is not None and (target.matches(sig) or (_own_check_failed(target) and _own_check_failed(sig))):
        return "same", sig.short()
    return "different", sig.short()


def check_release(run: RunDir, v: Verdict, python: str, trial_root: str, run_one: RunOne) -> dict:
    """{status, detail, seconds, mode} of the run's failure under one interpreter."""
    spec = repro_spec(run, v)
    os.makedirs(trial_root, exist_ok=True)
    done: dict = {}
    if spec is not None:
        done["repro"] = run_one(spec, os.path.join(trial_root, "repro"), python)
    no_compile, compiled = script_specs(v, os.path.dirname(v.isolation.script))
    while True:
        step, row = decide(v, **done)
        if row is not None:
            return row
        done[step] = run_one(
            no_compile if step == "plain" else compiled,
            os.path.join(trial_root, "no-compile" if step == "plain" else "compiled"),
            python,
        )


def decide(
    v: Verdict, repro: Outcome | None = None, plain: Outcome | None = None, compiled: Outcome | None = None
) -> tuple[str | None, dict | None]:
    """(the run to make next, "plain" or "compiled"; None) or (None, the release's row), from the runs made so far.
    A repro that fails differently cannot speak for the release (its cut graph may not be valid there): then the
    script judges it, without compile and then as written."""
    said = ""
    if repro is not None:
        status, detail = judge(repro, target_of(v, True))
        if status != "different":
            return None, {"status": status, "detail": detail, "seconds": repro.seconds, "mode": "repro.py"}
        said = f"repro.py fails differently ({detail}), so the script decided"
    spent = sum(x.seconds for x in (repro, plain, compiled) if x is not None)
    if plain is None:
        return "plain", None
    if plain.failed:
        return None, {
            "status": "cannot_run",
            "detail": _joined("the script fails without torch.compile: " + plain.signature.short(), said),
            "seconds": round(spent, 1),
            "mode": "script",
        }
    if compiled is None:
        return "compiled", None
    status, detail = judge(compiled, target_of(v, False))
    return None, {"status": status, "detail": _joined(detail, said), "seconds": round(spent, 1), "mode": "script"}


def _joined(detail: str, said: str) -> str:
    return f"{detail}; {said}" if said else detail
