"""The pack of a `reprokit bisect` run: ISSUE.md, repro.py, source, env, the decisive trials' logs."""
from __future__ import annotations

import json
import os
from typing import Optional

from reprokit import __version__
from reprokit.data.records import Signature, Verdict
from reprokit.data.rundir import RunDir, write_atomic
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.trial_files import trial_record
from reprokit.errors import ReprokitError
from reprokit.report.pack import (PackPlan, environment_report, environment_variables, env_texts, read_tail,
                                  short_digest, source_texts, trial_logs, trim_traceback)
from reprokit.report.redact import Redactor
from reprokit.report.render import environment


def load_verdict(run: RunDir) -> Verdict:
    """The run's verdict, or a ReprokitError when the bisect has not finished."""
    if not run.exists("verdict.json"):
        raise ReprokitError(f"{run.path} has no verdict.json yet; run reprokit bisect to completion first")
    return Verdict.from_dict(run.read_json("verdict.json"))


def error_log(v: Verdict) -> str:
    """The first failing trial's traceback, trimmed to its decisive part (or its stderr and stacks)."""
    trial = (v.decisive_trials or {}).get("first_failing")
    if not trial:
        return "(no failing trial recorded)"
    result = trial_record(trial)
    if result.get("traceback"):
        return trim_traceback(result["traceback"])
    err = read_tail(os.path.join(trial, "stderr.txt"), 200_000) or ""
    stacks = read_tail(os.path.join(trial, "stacks.txt"), 200_000) or ""
    return trim_traceback(err + ("\n" + stacks if stacks.strip() else ""))


def summary(v: Verdict) -> str:
    """The verdict in a few sentences, for ISSUE.md and README.md."""
    sig = Signature.from_dict(v.signature) if v.signature else None
    what = {"exception": "raises", "crash": "crashes the process", "accuracy": "silently computes wrong values",
            "hang": "hangs", "exit": "makes the script's own check fail"}.get(v.kind or "", "fails")
    parts = [f"`torch.compile` {what} ({sig.short() if sig else 'unknown'}) in `{os.path.basename(v.script)}`."]
    if v.failing_stage:
        if v.last_passing_stage and v.failing_stage in STAGE_TITLES:
            parts.append(f"It passes with `{STAGE_TITLES[v.last_passing_stage]}` and fails from "
                         f"`{STAGE_TITLES.get(v.failing_stage, v.failing_stage)}` on, so the bug is in that stage.")
        else:
            parts.append(f"Every stock stage passes; the script's own backend `{v.failing_stage}` fails.")
    if v.graph is not None:
        parts.append(f"Graph {v.graph} of {v.graph_count} that Dynamo produced fails on its own.")
    if v.subsystem:
        parts.append(f"Torch's bisector counters pin it to {v.subsystem['name']} application "
                     f"#{v.subsystem['application']}: `{v.subsystem.get('detail')}`.")
    if v.config:
        parts.append("It passes with " + ", ".join(f"`{k}={val!r}`" for k, val in v.config.items()) + ".")
    if v.flaky:
        parts.append(f"The failure is flaky: it reproduced in {v.repro_rate:.0%} of runs.")
    return " ".join(parts)


# What each kind of repro is, in the words ISSUE.md uses.
REPRO_KINDS = {
    "graph": "the failing FX graph alone",
    "graph_in_context": "the failing FX graph replayed with the script's call-time context (autocast, grad mode, "
                        "dtype), the ops it registered and the compiler hooks it set",
    "graph_in_script": "the FX graph minified inside the running script, whose own check decided; standalone, it "
                       "checks compiled against eager and a float64 reference",
    "source": "the script itself, reduced statement by statement",
}


def repro_note(v: Verdict, repro: Optional[str], inline: Optional[str]) -> str:
    """What ISSUE.md says about the repro: what kind it is, its size and whether it was verified."""
    if not repro or not v.repro_verified and v.repro_attempts:
        tried = "; ".join(f"{a['kind']}: {a['result']}" for a in v.repro_attempts or [])
        return ("no verified standalone repro" + (f" ({tried})" if tried else "")
                + "; the original script is in the pack under source/")
    nodes = v.nodes or {}
    kind = REPRO_KINDS.get(v.repro_kind or "", "")
    note = (f"{kind + ', ' if kind else ''}{nodes.get('minified')} of {nodes.get('original')} "
            f"{nodes.get('unit', 'FX nodes')}, "
            + ("verified to fail the same way in two fresh interpreters" if v.repro_verified else
               f"NOT verified: it gave {Signature.from_dict(v.repro_signature).short() if v.repro_signature else 'nothing'}"))
    return note if inline else note + "; too long to inline, see repro.py in the pack"


def isolated_lines(v: Verdict) -> list:
    """ISSUE.md's list of what the bisect isolated besides the stage."""
    isolated = []
    if v.graph is not None:
        isolated.append(f"graph: {v.graph} of {v.graph_count}")
    if v.config:
        isolated.append("config flips that make it pass: " + ", ".join(f"`{k}={val!r}`" for k, val in v.config.items()))
    if v.subsystem:
        isolated.append(f"subsystem: `{v.subsystem['name']}` application #{v.subsystem['application']} of "
                        f"{v.subsystem.get('applications')}: `{v.subsystem.get('detail')}`"
                        + ("" if v.subsystem.get("confirmed") else " (boundary not stable on re-run)"))
    for o in v.other_failures or []:
        isolated.append(f"a different failure met on the way: {Signature.from_dict(o['signature']).short()}")
    if v.failing_stage in ("export", "decompose", "aoti_compile", "aoti_run") and v.message:  # export path (#20)
        isolated.append(v.message)  # the guard, the user's line and the fix; or the compile error's one line
    return isolated


def issue_text(run: RunDir, v: Verdict, tarball_name: str, redactor: Redactor) -> str:
    """ISSUE.md: the text for PyTorch's bug-report form, scrubbed."""
    env_data = environment_report(run)
    repro = read_tail(run.file("repro.py")) if v.repro and os.path.exists(run.file("repro.py")) else None
    inline = repro if repro and len(repro.splitlines()) < 100 else None
    sig = Signature.from_dict(v.signature) if v.signature else None
    title = (f"[torch.compile] {STAGE_TITLES.get(v.failing_stage or '', v.failing_stage or 'compile')}: "
             f"{sig.short()[:90] if sig else 'failure'}")
    ladder = [{"title": STAGE_TITLES.get(r["stage"], r["stage"]),
               "result": "pass" if r["kind"] == "pass" else ("FAIL" if r["same"] else f"fail ({r['kind']}, different)"),
               "seconds": r["seconds"]} for r in v.ladder]
    text = environment().get_template("ISSUE.md.j2").render(
        title=title, summary=summary(v), ladder=ladder, isolated=isolated_lines(v), repro_inline=inline,
        repro_note=repro_note(v, repro, inline),
        graph_code=(v.graph_code or "").strip() if v.graph_code and len(v.graph_code.splitlines()) <= 80 else None,
        graph=v.graph, error_log=error_log(v), versions=env_data.get("text") or env_data.get("error", "unavailable"),
        reprokit_version=__version__, command=run.read_json("run.json").get("command") or "reprokit bisect",
        tarball_name=tarball_name)
    return redactor.scrub(text, "ISSUE.md")


def decisive_logs(v: Verdict) -> dict:
    """logs/: the decisive trials' output; TORCH_LOGS output and the TORCH_TRACE log of the failing stage."""
    texts: dict = {}
    packed: set = set()
    for role, trial in sorted((v.decisive_trials or {}).items()):
        if trial in packed:
            continue  # one trial in two roles (the original carries torch's logs): packed once, first role
        packed.add(trial)
        texts.update(trial_logs(trial, f"logs/{role}", ("stdout.txt", "stderr.txt", "stacks.txt", "spec.json")))
        trace_dir = os.path.join(trial, "trace")
        if os.path.isdir(trace_dir):
            texts.update(trial_logs(trace_dir, f"logs/{role}/trace", tuple(sorted(os.listdir(trace_dir)))))
            tlparse = tlparse_report(trace_dir)
            if tlparse:
                texts[f"logs/{role}/tlparse.txt"] = tlparse
    return texts


def bisect_env_texts(run: RunDir, v: Verdict, info: dict, redactor: Redactor) -> dict:
    """env/ of a bisect pack: versions, allowlisted variables, the script's compiler config and compile args."""
    texts = env_texts(environment_report(run))
    texts["env/environment.json"] = environment_variables(info, redactor)
    result = trial_record((v.decisive_trials or {}).get("first_failing") or "")
    texts["env/compiler_config.json"] = json.dumps(result.get("user_configs") or {}, indent=2, sort_keys=True)
    texts["env/compile_args.json"] = json.dumps(v.compile_args or {}, indent=2, sort_keys=True)
    texts["env/command.txt"] = (info.get("command") or "") + "\n" + "argv: " + json.dumps(v.argv) + "\n"
    return texts


def add_repro(plan: PackPlan, run: RunDir, v: Verdict) -> None:
    """repro.py and its saved inputs, when minify wrote them."""
    if v.repro and os.path.exists(run.file("repro.py")):
        plan.texts["repro.py"] = read_tail(run.file("repro.py"))
        if os.path.exists(run.file("repro_inputs.pt")):
            with open(run.file("repro_inputs.pt"), "rb") as f:
                plan.blobs["repro_inputs.pt"] = f.read()


def bisect_plan(run: RunDir) -> PackPlan:
    """Everything the tarball of a bisect run holds, named reprokit-<script>-<hash of the verdict>."""
    v = load_verdict(run)
    info = run.read_json("run.json")
    # Secret values come from the live environment (never stored in the run folder).
    redactor = Redactor.from_environment(None, argv=list(v.argv) + [info.get("command", "")])
    name = os.path.splitext(os.path.basename(v.script))[0]
    plan = PackPlan(top=f"reprokit-{name}-{short_digest(v.to_dict() | {'tarball': None, 'run_dir': ''})}",
                    redactor=redactor)
    first = (v.decisive_trials or {}).get("first_failing") or ""
    plan.texts.update(source_texts(v.script, trial_record(first).get("local_modules") or []))
    plan.texts.update(bisect_env_texts(run, v, info, redactor))
    plan.texts.update(decisive_logs(v))
    verdict = v.to_dict()
    verdict["run_dir"] = os.path.basename(v.run_dir or run.path)
    verdict["tarball"] = None
    plan.texts["verdict.json"] = json.dumps(verdict, indent=2, sort_keys=True, default=str)
    add_repro(plan, run, v)
    plan.texts["ISSUE.md"] = issue_text(run, v, plan.top + ".tar.gz", redactor)
    plan.texts["README.md"] = environment().get_template("README.md.j2").render(
        name=plan.top, reprokit_version=__version__, summary=summary(v), has_repro="repro.py" in plan.texts,
        has_inputs="repro_inputs.pt" in plan.blobs, verified=v.repro_verified,
        expected=Signature.from_dict(v.signature).short() if v.signature else "a failure",
        no_repro_reason=v.message or "minify did not run")
    return plan


def tlparse_report(trace_dir: str) -> Optional[str]:
    """tlparse's index of a TORCH_TRACE log, when tlparse is installed; kept in the run folder once made."""
    import shutil
    import subprocess

    cached = os.path.join(trace_dir, "..", "tlparse.txt")
    if os.path.exists(cached):
        return read_tail(cached)
    exe = shutil.which("tlparse")
    logs = [f for f in sorted(os.listdir(trace_dir)) if f.endswith(".log")]
    if not exe or not logs:
        return None
    out = os.path.join(trace_dir, "..", "tlparse")
    try:
        p = subprocess.run([exe, os.path.join(trace_dir, logs[0]), "-o", out, "--overwrite", "--no-browser"],
                           capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    index = read_tail(os.path.join(out, "index.html")) if p.returncode == 0 else p.stderr
    write_atomic(cached, index or "")
    return index
