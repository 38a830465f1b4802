"""The pack of a `reprokit bisect` run, top-down: the run's facts read once (report/pack_facts.py), then each part
rendered from them by its own module, once and in order (source/, env/, logs/, verdict.json, the run folder's own
files: repro.py, test_repro.py, capture/; ISSUE.md, README.md); the plan scrubs every text as it is written (report/pack.py)."""

from __future__ import annotations

import json
import os

from reprokit import __version__
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.signature import Signature
from reprokit.data.verdict import Verdict
from reprokit.report.pack import PackPlan, short_digest
from reprokit.report.pack_env import bisect_env_texts
from reprokit.report.pack_facts import gather, load_verdict  # noqa: F401 (load_verdict: app/minify reads through it)
from reprokit.report.pack_files import run_files
from reprokit.report.pack_issue import issue_text
from reprokit.report.pack_logs import decisive_logs
from reprokit.report.pack_source import source_texts
from reprokit.report.render import environment
from reprokit.report.summary import summaries


def bisect_plan(run: RunDir, include_data: bool = False, verdict: Verdict | None = None) -> PackPlan:
    """Everything the tarball of a bisect run holds, named reprokit-<script>-<hash of the verdict>; real input data
    only with include_data (`reprokit pack --include-data RUN_DIR`). verdict: the one the run holds (else read)."""
    facts = gather(run, verdict)
    v = facts.verdict
    iso = v.isolation
    name = os.path.splitext(os.path.basename(iso.script))[0]
    digest = short_digest(v.to_dict() | {"tarball": None, "run_dir": ""})
    plan = PackPlan(top=f"reprokit-{name}-{digest}", redactor=facts.redactor)
    source, source_notes = source_texts(iso.script, facts.first.get("local_modules") or [], facts.git)
    env = bisect_env_texts(facts)
    logs, tlparse_at = decisive_logs(v.decisive_trials, facts.error)
    public = v.to_dict() | {"run_dir": os.path.basename(v.run.run_dir or run.path), "tarball": None}
    files = run_files(facts, include_data)
    brief, whole = summaries(v)
    data_attached = "repro_inputs.pt" in files.blobs
    issue = issue_text(facts, files.repro, brief, plan.top + ".tar.gz", tlparse_at, data_attached)
    plan.texts.update(source | env | logs | {VERDICT_FILE: json.dumps(public, indent=2, sort_keys=True, default=str)})
    plan.texts.update(files.texts | {"ISSUE.md": issue})
    plan.blobs.update(files.blobs)
    plan.notes.update(source_notes | ({"input_data": files.input_data} if files.input_data else {}))
    plan.texts["README.md"] = (
        environment()
        .get_template("README.md.j2")
        .render(
            name=plan.top,
            reprokit_version=__version__,
            summary=whole,
            has_repro="repro.py" in plan.texts,
            has_inputs=data_attached,
            verified=v.repro.verified,
            has_test="test_repro.py" in plan.texts,
            expected=Signature.from_dict(iso.signature).said() if iso.signature else "a failure",
            no_repro_reason=v.message or "minify did not run",
        )
    )
    return plan
