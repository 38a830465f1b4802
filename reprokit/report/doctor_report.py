"""The pack of a `reprokit doctor` run, and its issue text when a finding is torch.compile's own limitation."""

from __future__ import annotations

import json
import os

from reprokit import __version__
from reprokit.data.doctor import DoctorReport
from reprokit.data.rundir import RunDir
from reprokit.data.trial_files import read_tail, trial_record
from reprokit.errors import ReprokitError
from reprokit.report.env import allowed_env, environment_report
from reprokit.report.git import git_state
from reprokit.report.pack import PackPlan, short_digest
from reprokit.report.pack_env import env_texts, environment_variables
from reprokit.report.pack_logs import trial_logs
from reprokit.report.pack_source import source_texts
from reprokit.report.redact import Redactor
from reprokit.report.render import environment

# A script longer than this is attached in source/, not inlined in the issue text.
INLINE_LINES = 80


def issue_text(run: RunDir, r: DoctorReport, env_text: str, tarball: str) -> str | None:
    """GitHub issue text for the compiler-owned findings; None when every finding is the script's to fix."""
    compiler = r.compiler_findings()
    if not compiler:
        return None
    info = run.read_json("run.json")
    source = read_tail(r.script) or ""
    inline = source if source.count("\n") <= INLINE_LINES else None
    return (
        environment()
        .get_template("DOCTOR_ISSUE.md.j2")
        .render(
            r=r,
            findings=compiler,
            name=os.path.basename(r.script),
            source=inline,
            versions=env_text,
            reprokit_version=__version__,
            command=info.get("command") or "reprokit doctor",
            tarball=tarball,
        )
    )


def readme(top: str, command: str, has_issue: bool) -> str:
    """README.md of a doctor pack: what each part holds."""
    return (
        f"# {top}\n\nWritten by reprokit {__version__} (`{command or 'reprokit doctor'}`)."
        "\n\n- DOCTOR.md: the findings, each with the line it applies to and a fix\n"
        "- doctor.json: the same, for machines\n- source/: the script and its local modules, git "
        "state\n- env/: versions and allowlisted environment variables\n- logs/: the eager and the "
        "compiled run (stdout, stderr, what Dynamo recorded)\n"
        + (
            "- ISSUE.md: issue text for the findings that are torch.compile's limitations\n"
            if has_issue
            else "- no ISSUE.md: every finding is the script's to fix\n"
        )
        + "- MANIFEST.json: every file's sha256, and what was redacted\n"
    )


def doctor_plan(run: RunDir) -> PackPlan:
    """The doctor run's pack: DOCTOR.md, findings, source, env, logs (and ISSUE.md for compiler findings)."""
    if not run.exists("doctor.json"):
        raise ReprokitError(f"{run.path} has no doctor.json yet; run reprokit doctor to completion first")
    r = DoctorReport.from_dict(run.read_json("doctor.json"))
    info = run.read_json("run.json")
    redactor = Redactor.for_run(run.path, argv=list(r.argv) + [info.get("command", "")])
    public = {
        **r.to_dict(),
        "run_dir": os.path.basename(run.path),
        "tarball": None,
        "trials": {k: os.path.basename(v) for k, v in (r.trials or {}).items()},
    }
    name = os.path.splitext(os.path.basename(r.script))[0]
    plan = PackPlan(
        top=f"reprokit-doctor-{name}-{short_digest({k: v for k, v in public.items() if k != 'speed'})}",
        redactor=redactor,
    )
    env_data = environment_report(run)
    plan.texts.update(
        {
            "doctor.json": json.dumps(public, indent=2, sort_keys=True, default=str),
            "DOCTOR.md": read_tail(run.file("DOCTOR.md")) or "",
        }
    )
    plan.texts.update(env_texts(env_data, collect_json=False, smi=()))
    plan.texts["env/command.txt"] = (info.get("command") or "") + "\nargv: " + json.dumps(list(r.argv)) + "\n"
    plan.texts["env/environment.json"] = environment_variables(allowed_env(info.get("environment")), redactor)
    compiled = (r.trials or {}).get("compiled", "")
    record = trial_record(compiled)
    imported, read = record.get("local_modules") or [], record.get("local_files_read") or []
    source, notes = source_texts(r.script, imported, git_state(r.script, imported, read))
    plan.texts.update(source)
    plan.notes.update(notes)
    for role, trial in sorted((r.trials or {}).items()):
        plan.texts.update(trial_logs(trial, f"logs/{role}", ("stdout.txt", "stderr.txt", "observed.json", "spec.json")))
    issue = issue_text(run, r, env_data.get("text") or "unavailable", plan.top + ".tar.gz")
    if issue:
        plan.texts["ISSUE.md"] = issue
    plan.texts["README.md"] = readme(plan.top, info.get("command"), bool(issue))
    return plan
