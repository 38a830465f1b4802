"""Command line: parse, call the use case, render. No logic beyond that."""
from __future__ import annotations

import json
import os
import shlex
import sys

import click

from reprokit.app import usecases as app
from reprokit.errors import NothingToIsolate, ReprokitError
from reprokit.data.stages import STAGE_TITLES

EXIT_BAD_INPUT = 2
EXIT_NOTHING = 3


class Printer:
    """Renders app events as progress lines on stderr (stdout stays clean for --json)."""

    def __init__(self, verbose: bool, quiet: bool):
        self.verbose = verbose
        self.quiet = quiet

    def line(self, text: str) -> None:
        if not self.quiet:
            click.echo(text, err=True)

    def __call__(self, event: str, **d) -> None:
        if event == "trial" and self.verbose:
            o, s = d["outcome"], d["spec"]
            self.line(f"    · {s.label or s.stage:<38} {o.kind:<9} {o.seconds:6.1f} s"
                      f"{'  (journal)' if d['cached'] else ''}  {o.signature.short()[:70]}")
        elif event == "run_dir":
            self.line(f"run folder {d['path']}")
        elif event == "stage":
            o = d["outcome"]
            mark = "✓" if o.kind == "pass" else "✗"
            same = "" if o.kind == "pass" else ("  (same as the original)" if d.get("same", True) else "  (a different failure)")
            self.line(f"  {mark} {STAGE_TITLES.get(d['stage'], d['stage']):<28} {o.signature.short()[:60]:<60} "
                      f"{o.seconds:5.1f} s{same}")
        elif event == "original":
            o = d["outcome"]
            self.line(f"  ✗ original run ({o.user_backend or '?'})  {o.signature.short()[:70]}  {o.seconds:.1f} s")
        elif event == "graph":
            self.line(f"  ✗ graph {d['graph']} of {d['count']} fails alone")
        elif event == "configs":
            fixes = ", ".join(d["fixes"]) or "none"
            self.line(f"  · {d['tried']} config flips tried; flips that make it pass: {fixes}")
        elif event == "subsystems":
            self.line(f"  · subsystems turned off: {', '.join(d['tried'])}; off alone, these make it pass: "
                      f"{', '.join(d['fixes']) or 'none'}")
        elif event == "subsystem":
            self.line(f"  ✗ {d['name']} application #{d['application']} of {d['applications']}: {d['detail']}"
                      f"{'' if d['confirmed'] else '  (boundary not stable on re-run)'}")
        elif event == "minify_start":
            self.line(f"  minifying graph {d['graph']} ({d['nodes']} nodes) ...")
        elif event == "minify_step":
            if self.verbose:
                self.line(f"    minify: {d['what']} → {d['nodes']} nodes")
        elif event == "minified":
            self.line(f"  minified graph {d['before']} → {d['after']} nodes in {d['trials']} trials, "
                      f"{d['seconds']:.1f} s; repro.py {'verified in a fresh process' if d['verified'] else 'NOT verified'}")
        elif event == "modes":
            for r in d["rows"]:
                mark = "✓" if r["kind"] == "pass" else "✗"
                what = r["speed"] if r["kind"] in ("pass", "slow") else r["kind"] + (
                    " (same failure)" if r.get("same") else " (a different failure)")
                self.line(f"  {mark} mode={r['mode'] or 'default'} dynamic={r['dynamic']}: {what}")
        elif event == "note":
            self.line(f"  {d['text']}")
        elif event == "packed":
            self.line(f"wrote {d['path']}")


def verdict_json(v) -> dict:
    d = v.to_dict()
    d.pop("graph_code", None)
    return d


def summary_table(v) -> str:
    rows = [("stage", "result", "seconds")]
    for r in v.ladder:
        rows.append((STAGE_TITLES.get(r["stage"], r["stage"]), "pass" if r["kind"] == "pass" else
                     ("FAIL (same)" if r["same"] else f"fail ({r['kind']}, different)"), f"{r['seconds']:.1f}"))
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = ["  ".join(c.ljust(width[i]) for i, c in enumerate(r)) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in width))
    facts = [("failing stage", v.failing_stage), ("failure", (v.signature or {}).get("kind")),
             ("graph", None if v.graph is None else f"{v.graph} of {v.graph_count}"),
             ("config that makes it pass", json.dumps(v.config) if v.config else None),
             ("subsystem", None if not v.subsystem else
              f"{v.subsystem['name']} #{v.subsystem['application']}: {v.subsystem['detail']}"),
             ("cuda fault", None if not v.cuda_fault else f"{v.cuda_fault['fault']} in {v.cuda_fault['kernel']}; "
              f"device afterwards: {v.cuda_fault.get('device_check') or 'not checked'}"),
             ("speed", (v.speed or {}).get("original")),
             ("modes that pass", None if v.modes is None else
              ", ".join(f"mode={r['mode'] or 'default'} dynamic={r['dynamic']}" for r in v.modes
                        if r["kind"] == "pass") or "none"),
             ("repro", v.repro), ("tarball", v.tarball),
             ("trials", f"{v.trials} in {v.seconds:.1f} s")]
    lines.append("")
    lines += [f"{k:<26} {val}" for k, val in facts if val is not None]
    if v.other_failures:
        lines.append(f"{'other failures seen':<26} " + "; ".join(
            f"{o['signature'].get('exc_type') or o['signature']['kind']}: {o['signature'].get('message', '')[:50]}"
            for o in v.other_failures))
    if v.message:
        lines.append(v.message)
    return "\n".join(lines)


def _fail(message: str, code: int):
    click.echo(f"reprokit: {message}", err=True)
    sys.exit(code)


def _run_use_case(call, as_json: bool, empty_key: str):
    """The use case's result; bad input exits 2 and "nothing to isolate" exits 3, each with one line (and with
    --json, one JSON object whose empty_key is null)."""
    try:
        return call()
    except ReprokitError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    except NothingToIsolate as e:
        if as_json:
            click.echo(json.dumps({empty_key: None, "message": str(e), "exit_code": EXIT_NOTHING}))
        _fail(str(e), EXIT_NOTHING)


@click.group()
@click.version_option(package_name="reprokit")
def main():
    """Turn a torch.compile failure into a minimal repro and an upstream-ready report."""


@main.command()
@click.argument("script")
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per trial (default: from the baseline run).")
@click.option("--jobs", "-j", type=int, default=None,
              help="Trials at once (default: one per GPU on a machine with several, else the CPU cores, at most 4).")
@click.option("--repeat", type=int, default=1, help="Run the original N times to measure how often it fails.")
@click.option("--check-accuracy", is_flag=True, help="Compare every compiled graph's outputs with eager.")
@click.option("--no-configs", is_flag=True, help="Skip the inductor config flips.")
@click.option("--no-subsystems", is_flag=True, help="Skip bisecting torch's pass and lowering counters.")
@click.option("--no-minify", is_flag=True, help="Stop after the verdict.")
@click.option("--no-pack", is_flag=True, help="Do not write the tarball.")
@click.option("--max-input-bytes", type=int, default=64 << 20, help="Budget for saved real graph inputs.")
@click.option("--kind", type=click.Choice(["failure", "slow"]), default="failure",
              help="slow: compiled slower than eager (per call, after warm-up) is the failure to bisect.")
@click.option("--slow-threshold", type=float, default=10.0, help="--kind slow: percent slower that counts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per trial.")
def bisect(script, script_args, output_dir, timeout, jobs, repeat, check_accuracy, no_configs, no_subsystems,
           no_minify, no_pack, max_input_bytes, kind, slow_threshold, as_json, verbose):
    """Name the compiler stage, graph, config and pass that break SCRIPT, then minify and pack it.

    Arguments after -- are passed to the script: reprokit bisect train.py -- --lr 3e-4"""
    args = tuple(script_args)
    printer = Printer(verbose, quiet=False)
    command = "reprokit bisect " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    v = _run_use_case(lambda: app.bisect(
        script, args, output_dir=output_dir, timeout=timeout, jobs=jobs, repeat=repeat,
        check_accuracy=check_accuracy, configs=not no_configs, subsystems=not no_subsystems, minify=not no_minify,
        pack=not no_pack, max_input_bytes=max_input_bytes, kind=kind, slow_threshold=slow_threshold / 100.0,
        command=command, emit=printer), as_json, empty_key="failing_stage")
    if as_json:
        click.echo(json.dumps(verdict_json(v), sort_keys=True))
    else:
        click.echo(summary_table(v))


@main.command()
@click.argument("run_dir")
@click.option("--resume", is_flag=True, help="Continue from the smallest failing graph found so far.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--verbose", "-v", is_flag=True)
def minify(run_dir, resume, as_json, verbose):
    """Minify the failing graph of an earlier bisect run and write a verified repro.py."""
    from reprokit.minify.run import minify_run
    from reprokit.data.rundir import RunDir

    try:
        v = minify_run(RunDir.open(run_dir), emit=Printer(verbose, quiet=False), resume=resume)
    except ReprokitError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    click.echo(json.dumps(verdict_json(v), sort_keys=True) if as_json else summary_table(v))


@main.command()
@click.argument("script")
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per run (default: from the eager run).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per run, and every finding's detail.")
def doctor(script, script_args, output_dir, timeout, as_json, verbose):
    """Explain why compiled SCRIPT is not faster: graph breaks, recompilations, silent fall-backs, speed.

    Arguments after -- are passed to the script: reprokit doctor train.py -- --steps 20"""
    printer = Printer(verbose, quiet=False)
    command = "reprokit doctor " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    r = _run_use_case(lambda: app.doctor(script, tuple(script_args), output_dir=output_dir, timeout=timeout,
                                         command=command, emit=printer), as_json, empty_key="findings")
    if as_json:
        click.echo(json.dumps(r.to_dict(), sort_keys=True))
    else:
        click.echo(doctor_table(r, verbose))


def doctor_table(r, verbose: bool = False) -> str:
    """The findings as a terminal table: where, what, fix."""
    s = r.speed
    lines = [f"speed: {s['verdict']}"]
    if s.get("speedup") is not None:
        lines.append(f"       eager {s['eager_step_seconds'] * 1e3:.3f} ms/call, compiled "
                     f"{s['compiled_step_seconds'] * 1e3:.3f} ms/call ({s['steps_timed']} calls after warm-up); "
                     f"compile {s['compile_seconds']:.1f} s; {r.graphs} graph(s)")
    if not r.findings:
        lines.append("no graph breaks, recompilations or fall-backs")
    for i, f in enumerate(r.findings, 1):
        where = f"{os.path.basename(f['file'])}:{f['line']}" if f.get("file") else "-"
        lines.append("")
        lines.append(f"{i:>2}. {where:<22} {f['title']}")
        if f.get("code"):
            lines.append(f"    {'':<22} > {f['code']}")
        lines.append(f"    {'':<22} fix: {f['fix']}")
        if verbose and f.get("detail"):
            lines.append(f"    {'':<22} {f['detail']}")
        if f["owner"] == "compiler":
            lines.append(f"    {'':<22} torch.compile's limitation: `reprokit issue {r.run_dir}` writes the issue")
    lines.append("")
    lines.append(f"report {os.path.join(r.run_dir or '', 'DOCTOR.md')}")
    return "\n".join(lines)


def _parse_sets(sets) -> dict:
    out = {}
    for item in sets:
        key, sep, raw = item.partition("=")
        if not sep:
            raise ReprokitError(f"--set takes NAME=VALUE (an inductor config), got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


@main.command()
@click.argument("run_dir", required=False)
@click.option("--show", is_flag=True, help="Print what would be packed and what was redacted; write nothing.")
@click.option("--model", default=None, help="A registry name (see reprokit models) or package.module:factory.")
@click.option("--config", "config_path", default=None, help="A Hugging Face style Llama config.json.")
@click.option("--layers", type=int, default=None, help="Layers to compile (default 2; the requested depth is kept).")
@click.option("--sequence-length", type=int, default=2048)
@click.option("--batch-size", type=int, default=1)
@click.option("--tensor-parallel-gpus", type=int, default=1, help="Build one rank's shard of this many GPUs.")
@click.option("--device", default=None, help="cuda when a GPU is present, else cpu.")
@click.option("--dtype", default=None, help="bfloat16 on GPU, float32 on CPU.")
@click.option("--mode", default=None, help="torch.compile mode.")
@click.option("--dynamic/--no-dynamic", default=None)
@click.option("--timeout", type=float, default=600.0, help="Seconds for the compile attempt.")
@click.option("--set", "sets", multiple=True, help="NAME=VALUE inductor config for the attempt (repeatable).")
@click.option("--exact", is_flag=True, help="On a CPU too, run the requested sequence length and batch size.")
@click.option("--launch", is_flag=True, help="Run every tensor-parallel rank under torchrun (gloo on a CPU).")
@click.option("--output-dir", "-o", default=None)
@click.option("--json", "as_json", is_flag=True)
@click.option("--verbose", "-v", is_flag=True)
def pack(run_dir, show, model, config_path, layers, sequence_length, batch_size, tensor_parallel_gpus, device, dtype,
         mode, dynamic, timeout, sets, exact, launch, output_dir, as_json, verbose):
    """Pack an earlier run folder (RUN_DIR), or build --model and pack a safe compile attempt of it."""
    from reprokit.report.pack import pack_run, plan
    from reprokit.data.rundir import RunDir

    try:
        if model or config_path:
            from reprokit.app.model_pack import ModelRequest, pack_model

            req = ModelRequest(model=model, config_path=config_path, layers=layers, sequence_length=sequence_length,
                               batch_size=batch_size, tensor_parallel_gpus=tensor_parallel_gpus, device=device,
                               dtype=dtype, mode=mode, dynamic=dynamic, timeout=timeout, sets=_parse_sets(sets),
                               exact=exact, launch=launch)
            command = "reprokit pack " + " ".join(shlex.quote(a) for a in sys.argv[2:])
            v = pack_model(req, output_dir=output_dir, command=command, emit=Printer(verbose, quiet=False))
            keys = ("model", "params_total", "params_per_rank", "risk", "outcome", "compile_seconds",
                    "eager_step_seconds", "compiled_step_seconds", "speedup", "requested", "ran", "tarball",
                    "depth", "message", "run_dir", "signature", "peak_memory_bytes", "ranks",
                    "collectives_in_graph")
            click.echo(json.dumps({k: v.get(k) for k in keys}, sort_keys=True) if as_json
                       else f"{v['model']}: {v['outcome']}; tarball {v['tarball']}")
            return
        if not run_dir:
            raise ReprokitError("pass a run folder to pack, or --model NAME (see reprokit models)")
        run = RunDir.open(run_dir)
        if run.read_json("run.json").get("kind") == "doctor":
            from reprokit.report.doctor_report import pack_doctor_run

            if show:
                _show(*pack_doctor_run(run, dry=True))
                return
            path = pack_doctor_run(run)
        elif run.read_json("run.json").get("kind") == "model":
            from reprokit.report.model_report import pack_model_run

            if show:
                members, top, redactions = pack_model_run(run, dry=True)
                _show(members, top, redactions)
                return
            path = pack_model_run(run)
        else:
            app.load_verdict(run_dir)
            if show:
                _show(*plan(run))
                return
            path = pack_run(run)
    except ReprokitError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    click.echo(json.dumps({"tarball": path}) if as_json else f"wrote {path}")


def _show(members, top, redactions):
    for path in sorted(members):
        click.echo(f"{top}/{path}  {len(members[path])} bytes")
    click.echo(f"redacted: {len(redactions)}")
    for r in redactions:
        click.echo(f"  {r['kind']} in {r['place']}")


@main.command()
@click.option("--tensor-parallel-gpus", type=int, default=1)
def models(tensor_parallel_gpus):
    """What the model registry holds, with exact sizes (counted on the meta device)."""
    from reprokit.models.registry import REGISTRY, sizes

    click.echo(f"{'model':<10} {'hidden':>6} {'layers':>6} {'heads':>5} {'kv':>3} {'inter':>6} {'params':>16} "
               f"{'per rank':>16}  risk")
    for name, f in REGISTRY.items():
        s = sizes(f, tensor_parallel_gpus)
        click.echo(f"{name:<10} {f['hidden']:>6} {f['layers']:>6} {f['heads']:>5} {f['kv_heads']:>3} "
                   f"{f['intermediate']:>6} {s['params_total']:>16,} {s['params_per_rank']:>16,}  {s['risk'].split(':')[0]}")


@main.command()
@click.argument("run_dir")
def issue(run_dir):
    """Print the GitHub issue text of a run, ready for PyTorch's bug-report form."""
    from reprokit.report.pack import plan
    from reprokit.data.rundir import RunDir

    try:
        run = RunDir.open(run_dir)
        if run.read_json("run.json").get("kind") == "doctor":
            from reprokit.report.doctor_report import pack_doctor_run

            members, _, _ = pack_doctor_run(run, dry=True)
            if "ISSUE.md" not in members:
                _fail("every finding in this run is the script's to fix (see DOCTOR.md), none is a torch.compile "
                      "limitation: no issue to write", EXIT_NOTHING)
        elif run.read_json("run.json").get("kind") == "model":
            from reprokit.report.model_report import pack_model_run

            members, _, _ = pack_model_run(run, dry=True)
        else:
            app.load_verdict(run_dir)
            members, _, _ = plan(run)
    except ReprokitError as e:
        _fail(str(e), EXIT_BAD_INPUT)
    click.echo(members["ISSUE.md"].decode())


@main.command()
@click.option("--json", "as_json", is_flag=True)
def env(as_json):
    """Print the environment report alone (torch, CUDA, driver, GPU, Python, packages)."""
    from reprokit.report import env as envmod
    from reprokit.report.redact import Redactor

    data = envmod.collect()
    r = Redactor.from_environment()
    if as_json:
        click.echo(r.scrub(json.dumps(data, indent=2, sort_keys=True), "env"))
    else:
        click.echo(r.scrub(envmod.summary_text(data), "env"))


if __name__ == "__main__":
    main()
