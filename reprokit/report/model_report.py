"""Pack a `reprokit pack --model` run: same tarball format as a bisect run, with the model inlined in repro.py."""

from __future__ import annotations

import json
import os

from reprokit import __version__
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.trial_files import read_tail
from reprokit.errors import ReprokitError
from reprokit.report.env import environment_report
from reprokit.report.pack import PackPlan, short_digest, trim_traceback
from reprokit.report.pack_env import env_texts
from reprokit.report.pack_logs import trial_logs
from reprokit.report.redact import Redactor
from reprokit.report.render import environment

LLAMA_SOURCE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "models", "llama.py")


def depth_svg(rows: list) -> str:
    """Compile seconds against layer count as a small standalone SVG line chart."""
    pts = [(r["layers"], r["compile_seconds"]) for r in rows if r.get("compile_seconds") is not None]
    w, h, pad = 420, 240, 40
    if not pts:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}"><text x="10" y="20">no data</text></svg>\n'
    xmax, ymax = max(p[0] for p in pts), max(p[1] for p in pts) or 1.0

    def xy(p):
        return pad + (w - 2 * pad) * p[0] / xmax, h - pad - (h - 2 * pad) * p[1] / ymax

    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in map(xy, pts))
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"/><text x="{x + 4:.1f}" y="{y - 6:.1f}" font-size="10">'
        f"{p[1]:.1f}s</text>"
        for p, (x, y) in zip(pts, map(xy, pts))
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif">'
        f'<text x="{pad}" y="16" font-size="12">compile seconds vs layers</text>'
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>'
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{h - pad}" stroke="black"/>'
        f'<text x="{w - pad}" y="{h - pad + 16}" font-size="10">{xmax} layers</text>'
        f'<text x="4" y="{pad}" font-size="10">{ymax:.0f}s</text>'
        f'<polyline points="{line}" fill="none" stroke="steelblue" stroke-width="2"/>{dots}</svg>\n'
    )


def model_repro(v: dict) -> str:
    """A standalone repro.py: the model code inlined, the requested configuration by default."""
    with open(LLAMA_SOURCE) as f:
        source = f.read()
    return (
        environment()
        .get_template("model_repro.py.j2")
        .render(
            reprokit_version=__version__,
            model_source=source.strip(),
            v=v,
            fields=json.dumps(v["fields"]),
            requested=v["requested"],
        )
    )


def attempt_logs(trial: str) -> dict:
    """logs/compile_attempt/: the attempt's output; under torchrun, ranks other than 0 write beside rank 0's files."""
    ranks = sorted(d for d in os.listdir(trial) if d.startswith("rank")) if os.path.isdir(trial) else []
    texts = {}
    for sub in [""] + ranks:
        prefix = "logs/compile_attempt" + (f"/{sub}" if sub else "")
        texts.update(
            trial_logs(
                os.path.join(trial, sub), prefix, ("stdout.txt", "stderr.txt", "stacks.txt", "model.json", "spec.json")
            )
        )
    return texts


def model_plan(run: RunDir) -> PackPlan:
    """The pack of a model run: verdict, env, the compile attempt's logs, repro.py, ISSUE.md, depth chart."""
    v = run.verdict()
    if v is None:
        raise ReprokitError(f"{run.path} has no verdict.json yet; run reprokit pack --model to completion first")
    info = run.read_json("run.json")
    redactor = Redactor.for_run(run.path, argv=[info.get("command", "")])
    digest = short_digest({k: val for k, val in v.items() if k not in ("tarball", "run_dir", "trial")})
    plan = PackPlan(top=f"reprokit-{v['model']}-{digest}", redactor=redactor)
    env_data = environment_report(run)
    plan.texts[VERDICT_FILE] = json.dumps(
        {**v, "run_dir": os.path.basename(run.path), "trial": None, "tarball": None},
        indent=2,
        sort_keys=True,
        default=str,
    )
    plan.texts.update(env_texts(env_data, smi=("txt",)))
    plan.texts["env/command.txt"] = (info.get("command") or "") + "\n"
    plan.texts["compile_vs_depth.svg"] = depth_svg(v.get("depth") or [])
    if v.get("fields"):
        plan.texts["repro.py"] = model_repro(v)
    plan.texts.update(attempt_logs(v["trial"]))
    error = ""
    if v["outcome"] != "pass":
        error = trim_traceback(
            (read_tail(os.path.join(v["trial"], "stderr.txt")) or "")
            + "\n"
            + (read_tail(os.path.join(v["trial"], "stacks.txt")) or "")
        )
    plan.texts["ISSUE.md"] = (
        environment()
        .get_template("MODEL_ISSUE.md.j2")
        .render(
            v=v,
            error=error,
            versions=env_data.get("text") or "unavailable",
            reprokit_version=__version__,
            command=info.get("command") or "reprokit pack --model",
            repro=plan.texts.get("repro.py"),
            tarball=plan.top + ".tar.gz",
        )
    )
    return plan
