"""Pack a `reprokit doctor` run, and write its issue text when a finding is torch.compile's own limitation."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Callable, Optional

from reprokit import __version__
from reprokit.doctor.analysis import DoctorReport
from reprokit.errors import ReprokitError
from reprokit.report.render import environment
from reprokit.data.rundir import RunDir
from reprokit.trial.runner import trial_record
from reprokit.report import env as envmod
from reprokit.report.pack import _read, environment_report, source_texts, write_pack
from reprokit.report.redact import Redactor

# A script longer than this is attached in source/, not inlined in the issue text.
INLINE_LINES = 80


def issue_text(run: RunDir, r: DoctorReport, env_text: str, tarball: str) -> Optional[str]:
    """GitHub issue text for the compiler-owned findings; None when every finding is the script's to fix."""
    compiler = r.compiler_findings()
    if not compiler:
        return None
    info = run.read_json("run.json")
    source = _read(r.script) or ""
    inline = source if source.count("\n") <= INLINE_LINES else None
    return environment().get_template("DOCTOR_ISSUE.md.j2").render(
        r=r, findings=compiler, name=os.path.basename(r.script), source=inline, versions=env_text,
        reprokit_version=__version__, command=info.get("command") or "reprokit doctor", tarball=tarball)


def pack_doctor_run(run: RunDir, emit: Callable[..., None] = lambda *a, **k: None, dry: bool = False):
    """The doctor run's tarball (or, with dry, its members): DOCTOR.md, findings, source, env, logs."""
    if not run.exists("doctor.json"):
        raise ReprokitError(f"{run.path} has no doctor.json yet; run reprokit doctor to completion first")
    r = DoctorReport.from_dict(run.read_json("doctor.json"))
    info = run.read_json("run.json")
    redactor = Redactor.from_environment(None, argv=list(r.argv) + [info.get("command", "")])
    public = {**r.to_dict(), "run_dir": os.path.basename(run.path), "tarball": None,
              "trials": {k: os.path.basename(v) for k, v in (r.trials or {}).items()}}
    digest = hashlib.sha256(json.dumps({k: v for k, v in public.items() if k != "speed"}, sort_keys=True,
                                       default=str).encode()).hexdigest()[:8]
    name = os.path.splitext(os.path.basename(r.script))[0]
    top = f"reprokit-doctor-{name}-{digest}"
    env_data = environment_report(run)
    texts = {"doctor.json": json.dumps(public, indent=2, sort_keys=True, default=str),
             "DOCTOR.md": _read(run.file("DOCTOR.md")) or "",
             "env/collect_env.txt": env_data.get("text") or env_data.get("error", ""),
             "env/packages.json": json.dumps(env_data.get("packages") or {}, indent=2, sort_keys=True),
             "env/command.txt": (info.get("command") or "") + "\nargv: " + json.dumps(list(r.argv)) + "\n"}
    variables = {k: redactor.env_value(k, val, "env/environment.json")
                 for k, val in envmod.allowed_env(info.get("environment")).items()}
    texts["env/environment.json"] = json.dumps(variables, indent=2, sort_keys=True)
    texts.update(source_texts(r.script, trial_record((r.trials or {}).get("compiled", "")).get("local_modules") or []))
    for role, trial in sorted((r.trials or {}).items()):
        for fname in ("stdout.txt", "stderr.txt", "observed.json", "spec.json"):
            text = _read(os.path.join(trial, fname))
            if text:
                texts[f"logs/{role}/{fname}"] = text
    issue = issue_text(run, r, env_data.get("text") or "unavailable", top + ".tar.gz")
    if issue:
        texts["ISSUE.md"] = issue
    texts["README.md"] = (f"# {top}\n\nWritten by reprokit {__version__} (`{info.get('command') or 'reprokit doctor'}`)."
                          "\n\n- DOCTOR.md: the findings, each with the line it applies to and a fix\n"
                          "- doctor.json: the same, for machines\n- source/: the script and its local modules, git "
                          "state\n- env/: versions and allowlisted environment variables\n- logs/: the eager and the "
                          "compiled run (stdout, stderr, what Dynamo recorded)\n"
                          + ("- ISSUE.md: issue text for the findings that are torch.compile's limitations\n" if issue
                             else "- no ISSUE.md: every finding is the script's to fix\n")
                          + "- MANIFEST.json: every file's sha256, and what was redacted\n")
    return write_pack(run, texts, top, redactor, emit, dry)
