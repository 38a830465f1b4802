"""Pack a run folder into one deterministic, scrubbed, upstream-ready tarball."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
from typing import Callable, Optional

from reprokit import __version__
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.records import Signature, Verdict
from reprokit.report.render import environment
from reprokit.data.rundir import RunDir, write_atomic
from reprokit.trial.runner import trial_record
from reprokit.report import env as envmod
from reprokit.report.git import git_state
from reprokit.report.redact import Redactor

TEXT_LIMIT = 2_000_000  # bytes of one log kept in the pack (the tail: where a failure is)


def _read(path: str, limit: int = TEXT_LIMIT) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    return text if size <= limit else f"[... {size - limit} bytes cut ...]\n" + text


def environment_report(run: RunDir) -> dict:
    """collect_env etc., collected once per run folder and kept there (packing twice gives the same bytes)."""
    if not run.exists("env.json"):
        run.write_json("env.json", envmod.collect(run.read_json("run.json").get("python") or sys.executable))
    return run.read_json("env.json")


def trim_traceback(text: str, keep: int = 60) -> str:
    """The decisive part of a traceback: the last `keep` lines, which hold the error and its innermost frames."""
    lines = [l for l in text.rstrip().splitlines() if l.strip() not in ("^", "") and set(l.strip()) - set("^~ ")]
    return "\n".join(lines[-keep:])


def error_log(v: Verdict) -> str:
    trial = (v.decisive_trials or {}).get("first_failing")
    if not trial:
        return "(no failing trial recorded)"
    result = trial_record(trial)
    if result.get("traceback"):
        return trim_traceback(result["traceback"])
    err = _read(os.path.join(trial, "stderr.txt"), 200_000) or ""
    stacks = _read(os.path.join(trial, "stacks.txt"), 200_000) or ""
    return trim_traceback(err + ("\n" + stacks if stacks.strip() else ""))


def summary(v: Verdict) -> str:
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


def issue_text(run: RunDir, v: Verdict, tarball_name: str, redactor: Redactor) -> str:
    env_data = environment_report(run)
    repro = _read(run.file("repro.py")) if v.repro and os.path.exists(run.file("repro.py")) else None
    inline = repro if repro and len(repro.splitlines()) < 100 else None
    if repro:
        note = (f"{(v.nodes or {}).get('minified')} of {(v.nodes or {}).get('original')} "
                f"{(v.nodes or {}).get('unit', 'FX nodes')}, "
                + ("verified to fail the same way in two fresh processes" if v.repro_verified else
                   f"NOT verified: it gave {Signature.from_dict(v.repro_signature).short() if v.repro_signature else 'nothing'}"))
        if not inline:
            note += "; too long to inline, see repro.py in the pack"
    else:
        note = "no standalone repro was produced; the original script is in the pack under source/"
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
    sig = Signature.from_dict(v.signature) if v.signature else None
    title = (f"[torch.compile] {STAGE_TITLES.get(v.failing_stage or '', v.failing_stage or 'compile')}: "
             f"{sig.short()[:90] if sig else 'failure'}")
    ladder = [{"title": STAGE_TITLES.get(r["stage"], r["stage"]),
               "result": "pass" if r["kind"] == "pass" else ("FAIL" if r["same"] else f"fail ({r['kind']}, different)"),
               "seconds": r["seconds"]} for r in v.ladder]
    text = environment().get_template("ISSUE.md.j2").render(
        title=title, summary=summary(v), ladder=ladder, isolated=isolated, repro_inline=inline, repro_note=note,
        graph_code=(v.graph_code or "").strip() if v.graph_code and len(v.graph_code.splitlines()) <= 80 else None,
        graph=v.graph, error_log=error_log(v), versions=env_data.get("text") or env_data.get("error", "unavailable"),
        reprokit_version=__version__, command=run.read_json("run.json").get("command") or "reprokit bisect",
        tarball_name=tarball_name)
    return redactor.scrub(text, "ISSUE.md")


def source_texts(script: str, imported: list) -> dict:
    """source/: the script, the local modules it imported, and its git state (credentials stripped)."""
    texts = {}
    script_dir = os.path.dirname(script)
    for path in [script] + list(imported):
        text = _read(path)
        if text is not None:
            texts["source/" + os.path.relpath(path, script_dir)] = text
    git = git_state(script, imported)
    if git:
        diff = git.pop("diff", "")
        texts["source/git.json"] = json.dumps(git, indent=2, sort_keys=True)
        if diff:
            texts["source/git.diff"] = diff
    return texts


def write_pack(run: RunDir, texts: dict, top: str, redactor: Redactor, emit: Callable[..., None], dry: bool):
    """Scrub, add MANIFEST.json, and write the tarball beside the run folder (dry: the members instead)."""
    members = {p: redactor.scrub(t, p).encode() for p, t in texts.items()}
    members["MANIFEST.json"] = manifest(members, redactor.redactions)
    if dry:
        return members, top, redactor.redactions
    path = os.path.join(os.path.dirname(run.path), top + ".tar.gz")
    write_atomic(path, deterministic_tar(members, top))
    emit("packed", path=path)
    return path


def collect_members(run: RunDir, redactor: Redactor) -> tuple[dict, str]:
    """{relative path: bytes} of everything the tarball holds, already scrubbed; and the folder name."""
    v = Verdict.from_dict(run.read_json("verdict.json"))
    info = run.read_json("run.json")
    name = os.path.splitext(os.path.basename(v.script))[0]
    digest = hashlib.sha256(json.dumps(v.to_dict() | {"tarball": None, "run_dir": ""}, sort_keys=True,
                                       default=str).encode()).hexdigest()[:8]
    top = f"reprokit-{name}-{digest}"
    texts: dict[str, str] = {}
    blobs: dict[str, bytes] = {}

    first = (v.decisive_trials or {}).get("first_failing") or ""
    texts.update(source_texts(v.script, trial_record(first).get("local_modules") or []))

    # env/
    env_data = environment_report(run)
    texts["env/collect_env.txt"] = env_data.get("text") or env_data.get("error", "")
    texts["env/collect_env.json"] = json.dumps(env_data.get("json") or {}, indent=2, sort_keys=True)
    texts["env/packages.json"] = json.dumps(env_data.get("packages") or {}, indent=2, sort_keys=True)
    if env_data.get("nvidia_smi"):
        texts["env/nvidia-smi.txt"] = env_data["nvidia_smi"].get("text", "")
        texts["env/nvidia-smi.json"] = json.dumps(env_data["nvidia_smi"].get("gpus"), indent=2)
    variables = {k: redactor.env_value(k, val, "env/environment.json")
                 for k, val in envmod.allowed_env(info.get("environment")).items()}
    texts["env/environment.json"] = json.dumps(variables, indent=2, sort_keys=True)
    result = trial_record(first)
    texts["env/compiler_config.json"] = json.dumps(result.get("user_configs") or {}, indent=2, sort_keys=True)
    texts["env/compile_args.json"] = json.dumps(v.compile_args or {}, indent=2, sort_keys=True)
    texts["env/command.txt"] = (info.get("command") or "") + "\n" + "argv: " + json.dumps(v.argv) + "\n"

    # logs/: the decisive trials; TORCH_LOGS output and the TORCH_TRACE log of the failing stage
    packed: set = set()
    for role, trial in sorted((v.decisive_trials or {}).items()):
        if trial in packed:
            continue  # one trial in two roles (the original carries torch's logs): packed once, first role
        packed.add(trial)
        for fname in ("stdout.txt", "stderr.txt", "stacks.txt", "spec.json"):
            text = _read(os.path.join(trial, fname))
            if text:
                texts[f"logs/{role}/{fname}"] = text
        trace_dir = os.path.join(trial, "trace")
        if os.path.isdir(trace_dir):
            for fname in sorted(os.listdir(trace_dir)):
                text = _read(os.path.join(trace_dir, fname))
                if text:
                    texts[f"logs/{role}/trace/{fname}"] = text
            tlparse = tlparse_report(trace_dir)
            if tlparse:
                texts[f"logs/{role}/tlparse.txt"] = tlparse

    # the verdict, the repro
    verdict = v.to_dict()
    verdict["run_dir"] = os.path.basename(v.run_dir or run.path)
    verdict["tarball"] = None
    texts["verdict.json"] = json.dumps(verdict, indent=2, sort_keys=True, default=str)
    if v.repro and os.path.exists(run.file("repro.py")):
        texts["repro.py"] = _read(run.file("repro.py"))
        if os.path.exists(run.file("repro_inputs.pt")):
            with open(run.file("repro_inputs.pt"), "rb") as f:
                blobs["repro_inputs.pt"] = f.read()
    texts["ISSUE.md"] = issue_text(run, v, top + ".tar.gz", redactor)
    texts["README.md"] = environment().get_template("README.md.j2").render(
        name=top, reprokit_version=__version__, summary=summary(v), has_repro="repro.py" in texts,
        has_inputs="repro_inputs.pt" in blobs, verified=v.repro_verified,
        expected=Signature.from_dict(v.signature).short() if v.signature else "a failure",
        no_repro_reason=v.message or "minify did not run")

    members = {path: redactor.scrub(text, path).encode() for path, text in texts.items()}
    members.update(blobs)
    return members, top


def tlparse_report(trace_dir: str) -> Optional[str]:
    """tlparse's index of a TORCH_TRACE log, when tlparse is installed; kept in the run folder once made."""
    import shutil
    import subprocess

    cached = os.path.join(trace_dir, "..", "tlparse.txt")
    if os.path.exists(cached):
        return _read(cached)
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
    index = _read(os.path.join(out, "index.html")) if p.returncode == 0 else p.stderr
    write_atomic(cached, index or "")
    return index


def manifest(members: dict, redactions: list) -> bytes:
    files = [{"path": p, "size": len(b), "sha256": hashlib.sha256(b).hexdigest()} for p, b in sorted(members.items())]
    return (json.dumps({"files": files, "redacted": sorted(redactions, key=lambda r: (r["place"], r["kind"]))},
                       indent=2, sort_keys=True) + "\n").encode()


def deterministic_tar(members: dict, top: str) -> bytes:
    """Sorted regular files under one folder, mtime 0, uid/gid 0, no owner names, 0644, gzip without a timestamp."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(members):
            data = members[path]
            norm = os.path.normpath(path)
            if norm.startswith(("/", "..")) or os.path.isabs(norm):
                raise ValueError(f"refusing to pack {path!r}: outside the pack folder")
            info = tarfile.TarInfo(f"{top}/{norm}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.type = tarfile.REGTYPE
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def plan(run: RunDir) -> tuple[dict, str, list]:
    """(members, top folder, redactions) without writing anything (reprokit pack --show)."""
    info = run.read_json("run.json")
    # Secret values come from the live environment (never stored in the run folder).
    redactor = Redactor.from_environment(None, argv=list(
        Verdict.from_dict(run.read_json("verdict.json")).argv) + [info.get("command", "")])
    members, top = collect_members(run, redactor)
    members["MANIFEST.json"] = manifest(members, redactor.redactions)
    return members, top, redactor.redactions


def pack_run(run: RunDir, emit: Callable[..., None] = lambda *a, **k: None) -> str:
    """Write reprokit-<name>-<hash>.tar.gz beside the run folder; returns its path."""
    members, top, _ = plan(run)
    path = os.path.join(os.path.dirname(run.path), top + ".tar.gz")
    write_atomic(path, deterministic_tar(members, top))
    emit("packed", path=path)
    return path
