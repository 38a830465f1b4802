"""The pack of a `reprokit bisect` run: ISSUE.md, repro.py, source, env, the decisive trials' logs."""

from __future__ import annotations

import dataclasses
import json
import os

from reprokit import __version__
from reprokit.data.rate import rate_line
from reprokit.data.rundir import VERDICT_FILE, RunDir
from reprokit.data.signature import Signature
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.trial_files import trial_record
from reprokit.data.verdict import Verdict
from reprokit.data.warm_cache import describe as describe_warm
from reprokit.errors import ReprokitError
from reprokit.report import triage
from reprokit.report.command_text import portable_command, portable_text
from reprokit.report.issue_notes import attached_note, data_note, isolated_lines, repro_note
from reprokit.report.issue_parts import error_section, fit_github, tlparse_dir, tlparse_texts
from reprokit.report.pack import (
    PackPlan,
    env_texts,
    environment_report,
    environment_variables,
    read_tail,
    short_digest,
    source_texts,
    trial_logs,
)
from reprokit.report.portable import portable
from reprokit.report.redact import Redactor
from reprokit.report.render import environment


def passing_after(v: Verdict) -> list:
    """Stages above the failing one that pass all the same (jvp of ldexp #197086: aot_eager crashes, inductor's
    own decompositions take another path and pass)."""
    iso = v.isolation
    stages = [e["stage"] for e in iso.ladder or []]
    if iso.failing_stage not in stages:
        return []
    return [e["stage"] for e in (iso.ladder or [])[stages.index(iso.failing_stage) + 1 :] if e.get("kind") == "pass"]


@dataclasses.dataclass(frozen=True)
class RunFacts:
    """What the pack reads of a bisect's run folder, once, for every part that needs it: run.json, the first
    failing trial's record, the environment report (collected once and kept in env.json)."""

    info: dict
    first: dict
    env: dict

    @classmethod
    def read(cls, run: RunDir, v: Verdict) -> RunFacts:
        first = (v.decisive_trials or {}).get("first_failing") or ""
        return cls(run.read_json("run.json"), trial_record(first), environment_report(run))


def load_verdict(run: RunDir) -> Verdict:
    """The run's verdict, or a ReprokitError when the bisect has not finished."""
    recorded = run.verdict()
    if recorded is None:
        raise ReprokitError(f"{run.path} has no verdict.json yet; run reprokit bisect to completion first")
    return Verdict.from_dict(recorded)


def summary(v: Verdict, brief: bool = False) -> str:
    """The verdict in a few sentences, for README.md; brief (ISSUE.md, whose list of what was isolated says the
    graph, the config and the subsystem): what fails and in which stage only."""
    iso = v.isolation
    sig = Signature.from_dict(iso.signature) if iso.signature else None
    what = {
        "exception": "raises",
        "crash": "crashes the process",
        "accuracy": "silently computes wrong values",
        "hang": "hangs",
        "exit": "makes the script's own check fail",
    }.get(iso.kind or "", "fails")
    tool = "torch.export.export" if iso.export else "torch.compile"  # export() itself raised (#20)
    parts = [f"`{tool}` {what} ({sig.said() if sig else 'unknown'}) in `{os.path.basename(iso.script)}`."]
    if sig and sig.inside():  # the wrapper's message is the same for every error it holds: the one it holds
        inside = sig.inside()
        parts.append(f"The error inside that wrapper: {code_span(inside)}{'' if inside.endswith('.') else '.'}")
    if iso.plain_run:  # reprokit's instrumentation hid it: how it was bisected instead (bisect/plain.py)
        parts.append(iso.plain_run["paragraph"])
    parts.extend(stage_sentences(v))
    if iso.graph is not None and not brief:
        parts.append(f"Graph {iso.graph} of {iso.graph_count} that Dynamo produced fails on its own.")
    if iso.capture:
        parts.append(
            f"Found from one captured run of the job (`reprokit capture`, rank {iso.capture.get('rank')}): "
            "every trial ran the captured graph, none the script."
        )
    if v.subsystem and not brief:
        parts.append(
            f"Torch's bisector counters pin it to {v.subsystem['name']} application "
            f"#{v.subsystem['application']}: `{v.subsystem.get('detail')}`."
        )
    if v.config and not brief:
        parts.append("It passes with " + ", ".join(f"`{k}={val!r}`" for k, val in v.config.items()) + ".")
    if iso.flaky and iso.repro_rate is not None:
        parts.append(
            f"The failure is flaky: the script {rate_line(round(iso.repro_rate * iso.repro_runs), iso.repro_runs)}."
            if iso.repro_runs
            else f"The failure is flaky: it reproduced in {iso.repro_rate:.0%} of runs."
        )
        if iso.flaky_tries:
            parts.append(
                f"Each question (stage, counter, cut, the repro's own check) was asked until it failed that "
                f"way, up to {iso.flaky_tries} runs; one that passed all {iso.flaky_tries} counted as passing, "
                "so repro.py may need a few runs to fail."
            )
    if iso.unsteady:
        parts.append(f"Note: {iso.unsteady}.")
    return " ".join(parts)


def code_span(text: str) -> str:
    """Text as Markdown inline code, a backtick inside it kept (a double-backtick span)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def stage_sentences(v: Verdict) -> list:
    """The summary's sentence on the stage: the warm-cache run's, or which stage passes and which fails."""
    iso = v.isolation
    out: list = []
    if iso.warm_cache:
        said = describe_warm(iso.warm_cache)
        out.append(said[0].upper() + said[1:] + ".")
    elif iso.failing_stage and not (iso.plain_run or {}).get("doubt"):  # a doubt: its paragraph
        if iso.last_passing_stage and iso.failing_stage in STAGE_TITLES:
            later = passing_after(v)
            out.append(
                f"It passes with `{STAGE_TITLES[iso.last_passing_stage]}` and fails from "
                f"`{STAGE_TITLES.get(iso.failing_stage, iso.failing_stage)}` on, so the bug is in that stage."
                if not later
                else f"It passes with `{STAGE_TITLES[iso.last_passing_stage]}` and fails with "
                f"`{STAGE_TITLES.get(iso.failing_stage, iso.failing_stage)}`, so the bug is in that stage; "
                + " and ".join(f"`{STAGE_TITLES.get(s, s)}`" for s in later)
                + " passes again."
            )
        else:
            out.append(f"Every stock stage passes; the script's own backend `{iso.failing_stage}` fails.")
    return out


def issue_text(
    run: RunDir,
    v: Verdict,
    facts: RunFacts,
    tarball_name: str,
    redactor: Redactor,
    tlparse_at: str | None = None,
    error: dict | None = None,
    data: str = "",
) -> str:
    """ISSUE.md: the text for PyTorch's torch.compile bug-report form, scrubbed and portable. Each fact once, the
    minimal graph (the repro's) and not the original, and no file a GitHub reader cannot open but the tarball."""
    iso = v.isolation
    repro = read_tail(run.file("repro.py")) if v.repro.path and os.path.exists(run.file("repro.py")) else None
    repro = portable_code(repro, run.path, os.path.dirname(iso.script)) if repro else None
    inline = repro.rstrip("\n") if repro and len(repro.splitlines()) < 100 else None
    cuda = bool(facts.first.get("cuda"))
    ladder = [
        {
            "title": STAGE_TITLES.get(r["stage"], r["stage"]),
            "result": "pass" if r["kind"] == "pass" else ("FAIL" if r["same"] else f"fail ({r['kind']}, different)"),
            "seconds": r["seconds"],
        }
        for r in iso.ladder
    ]
    error = error or error_section(run, v)
    graph = minimal_graph(repro) if repro and not inline else None
    text = (
        environment()
        .get_template("ISSUE.md.j2")
        .render(
            title=triage.title(v, cuda),
            labels=triage.labels(v, cuda),
            summary=summary(v, brief=True),
            ladder=ladder,
            isolated=isolated_lines(v),
            repro_inline=inline,
            repro_note=repro_note(v, repro, inline) + (f". {data}" if data else ""),
            minimal_graph=graph,
            error_log=error["text"],
            error_source=error["source"],
            versions=facts.env.get("text") or facts.env.get("error", "unavailable"),
            reprokit_version=__version__,
            command=portable_command(
                facts.info.get("command") or "reprokit bisect", run.path, os.path.dirname(iso.script)
            ),
            tarball_name=tarball_name,
            attached=attached_note(v, tlparse_at),
            releases=v.run.versions,
        )
    )
    # Paths first: the redactor writes the home folder as ~, which would hide the interpreter's own paths.
    text = redactor.scrub(portable_text(text, run.path, os.path.dirname(iso.script)), "ISSUE.md")
    return fit_github(
        text,
        [
            (graph, "(the minimal graph is in the attached tarball)"),
            (inline, "(the minimal repro is in the attached tarball)"),
        ],
    )


def minimal_graph(repro: str) -> str | None:
    """The graph classes of repro.py (its `class ...(torch.nn.Module)` blocks), or None when they are too long to
    show (over 80 lines)."""
    lines, keep, inside = repro.split("\n"), [], False
    for line in lines:
        if line.startswith("class "):
            inside = True
        elif line and not line[0].isspace():
            inside = False
        if inside:
            keep.append(line)
    code = "\n".join(keep).strip("\n")
    return code if code and len(code.splitlines()) <= 80 else None


def portable_code(text: str, run_dir: str, project: str) -> str:
    """Python text with this machine's paths replaced in its comments only (the code itself must still run)."""
    return "\n".join(portable_text(l, run_dir, project) if l.lstrip().startswith("#") else l for l in text.split("\n"))


def decisive_logs(v: Verdict, error: dict | None = None) -> tuple:
    """(logs/ texts, where tlparse's report is): the decisive trials' output, the minimal repro's re-run, TORCH_LOGS
    output and the TORCH_TRACE log of the failing stage with tlparse's report of it."""
    texts: dict = {}
    packed: set = set()
    tlparse_at = None
    roles = sorted((v.decisive_trials or {}).items())
    if error and error.get("role") == "repro":
        roles.insert(0, ("repro", error["trial"]))
    for role, trial in roles:
        if trial in packed:
            continue  # one trial in two roles (the original carries torch's logs): packed once, first role
        packed.add(trial)
        texts.update(trial_logs(trial, f"logs/{role}", ("stdout.txt", "stderr.txt", "stacks.txt", "spec.json")))
        trace_dir = os.path.join(trial, "trace")
        if os.path.isdir(trace_dir):
            texts.update(trial_logs(trace_dir, f"logs/{role}/trace", tuple(sorted(os.listdir(trace_dir)))))
            report = tlparse_dir(trace_dir)
            if report and tlparse_at is None:
                tlparse_at = f"logs/{role}/tlparse"
                texts.update(tlparse_texts(report, tlparse_at))
    return texts, tlparse_at


def bisect_env_texts(v: Verdict, facts: RunFacts, redactor: Redactor) -> dict:
    """env/ of a bisect pack: versions, allowlisted variables, the script's compiler config and compile args."""
    info = facts.info
    texts = env_texts(facts.env)
    texts["env/environment.json"] = environment_variables(info, redactor)
    texts["env/compiler_config.json"] = json.dumps(facts.first.get("user_configs") or {}, indent=2, sort_keys=True)
    texts["env/compile_args.json"] = json.dumps(v.isolation.compile_args or {}, indent=2, sort_keys=True)
    texts["env/command.txt"] = (info.get("command") or "") + "\n" + "argv: " + json.dumps(v.isolation.argv) + "\n"
    return texts


def add_repro(plan: PackPlan, run: RunDir, v: Verdict, include_data: bool) -> None:
    """repro.py, test_repro.py (and its run's output), and the repro's real inputs (repro_inputs.pt) only when it
    needs them and --include-data asked for them; MANIFEST.json says which inputs the repro uses and whether real
    data is in the pack."""
    project = os.path.dirname(v.isolation.script)
    if v.repro.test_repro and os.path.exists(run.file("test_repro.py")):
        plan.texts["test_repro.py"] = portable_code(read_tail(run.file("test_repro.py")) or "", run.path, project)
        if os.path.exists(run.file("test_repro_output.txt")):
            plan.texts["logs/test_repro/output.txt"] = read_tail(run.file("test_repro_output.txt"))
    if not (v.repro.path and os.path.exists(run.file("repro.py"))):
        return
    plan.texts["repro.py"] = portable_code(read_tail(run.file("repro.py")) or "", run.path, project)
    has_file = v.repro.inputs == "file" or v.repro.inputs is None and os.path.exists(run.file("repro_inputs.pt"))
    if has_file and include_data and os.path.exists(run.file("repro_inputs.pt")):
        with open(run.file("repro_inputs.pt"), "rb") as f:
            plan.blobs["repro_inputs.pt"] = f.read()
    plan.notes["input_data"] = {
        "repro_inputs": v.repro.inputs or ("file" if has_file else "synthetic"),
        "real_data_included": "repro_inputs.pt" in plan.blobs or v.repro.inputs == "inline",
        "why": v.repro.inputs_note or None,
    }


def bisect_plan(run: RunDir, include_data: bool = False, verdict: Verdict | None = None) -> PackPlan:
    """Everything the tarball of a bisect run holds, named reprokit-<script>-<hash of the verdict>; real input data
    only with include_data (`reprokit pack --include-data RUN_DIR`). verdict: the one the run holds (else read)."""
    v = verdict or load_verdict(run)
    iso = v.isolation
    facts = RunFacts.read(run, v)
    info = facts.info
    # Secret values: found by the keyed hashes bisect recorded (never the values), so any shell packs the same.
    redactor = Redactor.for_run(run.path, argv=list(iso.argv) + [info.get("command", "")])
    name = os.path.splitext(os.path.basename(iso.script))[0]
    plan = PackPlan(
        top=f"reprokit-{name}-{short_digest(v.to_dict() | {'tarball': None, 'run_dir': ''})}", redactor=redactor
    )
    first = (v.decisive_trials or {}).get("first_failing") or ""
    record = facts.first
    plan.texts.update(
        source_texts(iso.script, record.get("local_modules") or [], record.get("local_files_read") or [], plan.notes)
    )
    plan.texts.update(bisect_env_texts(v, facts, redactor))
    error = error_section(run, v)
    logs, tlparse_at = decisive_logs(v, error)
    plan.texts.update(logs)
    verdict_json = v.to_dict()
    verdict_json["run_dir"] = os.path.basename(v.run.run_dir or run.path)
    verdict_json["tarball"] = None
    plan.texts[VERDICT_FILE] = json.dumps(verdict_json, indent=2, sort_keys=True, default=str)
    add_repro(plan, run, v, include_data)
    plan.texts.update(capture_texts(run, info, v))
    draft = os.path.join(first, "draft_export.txt")
    if first and (iso.export or {}).get("report") and os.path.exists(draft):  # export-stage failure (#20)
        with open(draft, errors="replace") as f:
            plan.texts["draft_export.txt"] = portable(f.read(), run.path, os.path.dirname(iso.script))
    plan.texts["ISSUE.md"] = issue_text(
        run, v, facts, plan.top + ".tar.gz", redactor, tlparse_at, error, data_note(v, "repro_inputs.pt" in plan.blobs)
    )
    plan.texts["README.md"] = (
        environment()
        .get_template("README.md.j2")
        .render(
            name=plan.top,
            reprokit_version=__version__,
            summary=summary(v),
            has_repro="repro.py" in plan.texts,
            has_inputs="repro_inputs.pt" in plan.blobs,
            verified=v.repro.verified,
            has_test="test_repro.py" in plan.texts,
            expected=Signature.from_dict(iso.signature).said() if iso.signature else "a failure",
            no_repro_reason=v.message or "minify did not run",
        )
    )
    return plan


def capture_texts(run: RunDir, info: dict, v: Verdict) -> dict:
    """capture/: what `reprokit capture` recorded of the failure (bisect --from-capture): its record, the graph's
    code and the job's summary; the pack holds them even when the graph did not fail again."""
    if not info.get("capture"):
        return {}
    texts = {}
    for rel in ("failure.json", "capture.json", os.path.join("case", "graph.py"), os.path.join("case", "meta.json")):
        path = run.file("capture", rel)
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                texts["capture/" + rel] = portable(f.read(), run.path, os.path.dirname(v.isolation.script))
    return texts
