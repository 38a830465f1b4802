"""`reprokit pack RUN_DIR`: pack a run folder of any kind (bisect, doctor or model) into its tarball.

The one place that knows which report builds the pack of which kind of run folder (pack and issue both ask it).
`pack --model` builds the model run folder first: app/model_attempt.py.
"""

from __future__ import annotations

import os

from reprokit.app.common import noop, run_kind
from reprokit.app.verdict_file import with_run
from reprokit.data.events import Emit, Event
from reprokit.data.rundir import RunDir
from reprokit.data.verdict import Verdict
from reprokit.errors import ReprokitError
from reprokit.report.bisect_report import bisect_plan
from reprokit.report.doctor_report import doctor_plan
from reprokit.report.model_report import model_plan
from reprokit.report.pack import PackPlan

PLANS = {"bisect": bisect_plan, "doctor": doctor_plan, "model": model_plan}


def pack_plan(run_dir: RunDir, include_data: bool = False, verdict: Verdict | None = None) -> PackPlan:
    """The pack of a run folder, built by the report of its kind (bisect, doctor or model); verdict: a bisect's, as
    the run in progress holds it (else read from the folder)."""
    kind = run_kind(run_dir)
    return bisect_plan(run_dir, include_data, verdict) if kind == "bisect" else PLANS[kind](run_dir)


def write_pack(run_dir: RunDir, emit: Emit = noop, include_data: bool = False, verdict: Verdict | None = None) -> str:
    """Write the run's tarball beside its folder; returns the path."""
    return pack_plan(run_dir, include_data, verdict).write(os.path.dirname(run_dir.path), emit)


def packed(run_dir: RunDir, verdict: Verdict, emit: Emit = noop, announce: bool = True) -> Verdict:
    """The pack phase of a bisect: the tarball written, and the verdict that names it."""
    if announce:
        emit(Event.PHASE, name="pack")
    tarball = write_pack(run_dir, emit=emit, verdict=verdict)
    return with_run(run_dir, verdict, tarball=tarball)


def pack_folder(run_dir: str | None, show: bool = False, include_data: bool = False) -> dict:
    """Pack a run folder: {"tarball": path}; with show, {"files": [{"path", "bytes"}], "redacted": [...]} and
    nothing written."""
    if not run_dir:
        raise ReprokitError("pass a run folder to pack, or --model NAME (see reprokit models)")
    folder = RunDir.open(run_dir)
    if not show:
        return {"tarball": write_pack(folder, include_data=include_data)}
    plan = pack_plan(folder, include_data)
    members = plan.members()
    return {
        "files": [{"path": f"{plan.top}/{path}", "bytes": len(members[path])} for path in sorted(members)],
        "redacted": plan.redactions,
    }
