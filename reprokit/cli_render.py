"""How the CLI shows things: progress lines, the doctor table, the models, versions and plan tables."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import click

from reprokit.cli_tally import PHASES, Tally, clock, phase_trials
from reprokit.data.events import Event
from reprokit.data.kinds import OutcomeKind
from reprokit.data.stages import STAGE_TITLES
from reprokit.data.verdict import Verdict
from reprokit.versions.releases import STATUS_TEXT


class Printer:
    """Renders app events as progress lines on stderr (stdout stays clean for --json), and counts where the run's
    trials and seconds went (self.tally). Lines go to `sink`: click's echo off a terminal, the live display on one
    (cli_live), which also wants a line for each finished trial (trial_lines)."""

    def __init__(
        self, verbose: bool, quiet: bool, sink: Callable[[str], None] | None = None, trial_lines: bool = False
    ):
        self.verbose = verbose
        self.quiet = quiet
        self.sink = sink or (lambda text: click.echo(text, err=True))
        self.trial_lines = trial_lines or verbose
        self.tally = Tally()
        # Trials finish on the runner's threads; a line and its count stay together.
        self.lock = threading.Lock()

    def line(self, text: str) -> None:
        if not self.quiet:
            self.sink(text)

    def __call__(self, event: str, **d) -> None:
        with self.lock:
            if event == Event.TRIAL and self.tally.answered_before(d):
                return  # listed and counted where it was first asked
            if self.tally.event(event, d):
                self.line(phase_line(self.tally))
            if event == Event.TRIAL and not self.trial_lines or event == Event.MINIFY_STEP and not self.verbose:
                return
            text = minified_line(d, self.tally) if event == Event.MINIFIED else event_text(event, d)
            if text is not None:
                self.line(text)
            if event == Event.RUN_DIR:  # the first phase began with the command: said once its folder is named
                self.line(phase_line(self.tally))


def phase_line(tally: Tally) -> str:
    """A new phase, with the time since the command started: "· ladder: which compiler stage fails (at 0:41)"."""
    name = tally.current.name  # "at": when it began (the first, with the command, is said once its folder is)
    return f"· {name}: {PHASES.get(name, name)} (at {clock(tally.current.started - tally.started)})"


def trial_line(d: dict) -> str:
    o, s = d["outcome"], d["spec"]
    return (
        f"    · {s.label or s.stage:<38} {o.kind:<9} {o.seconds:6.1f} s"
        f"{'  (journal)' if d['cached'] else ''}  {o.signature.told()[:70]}"
    )


def stage_line(d: dict) -> str:
    o = d["outcome"]
    mark = "✓" if o.kind == OutcomeKind.PASS else "✗"
    same = (
        ""
        if o.kind == OutcomeKind.PASS
        else ("  (same as the original)" if d.get("same", True) else "  (a different failure)")
    )
    return (
        f"  {mark} {STAGE_TITLES.get(d['stage'], d['stage']):<28} {o.signature.told()[:60]:<60} "
        f"{o.seconds:5.1f} s{same}"
    )


def original_line(d: dict) -> str:
    """The original run in the stage rows' columns, as one table; marked ✗ only when it fails (a passing one, or
    one that never compiled, is what the next line explains, not a failure)."""
    o = d["outcome"]
    how = o.user_backend or ("no torch.compile call" if not o.compiled else "backend unknown")
    title = f"original run ({how})"
    return f"  {'✗' if o.failed else '·'} {title:<28} {o.signature.told()[:60]:<60} {o.seconds:5.1f} s"


def event_text(event: str, d: dict) -> str | None:
    """One event's line, or None for an event that prints nothing."""
    if event in LINES:
        return LINES[event](d)
    if event == Event.MODES:
        return "\n".join(mode_line(r) for r in d["rows"])
    return None


def mode_line(r: dict) -> str:
    mark = "✓" if r["kind"] == "pass" else "✗"
    what = (
        r["speed"]
        if r["kind"] in ("pass", "slow")
        else r["kind"] + (" (same failure)" if r.get("same") else " (a different failure)")
    )
    return f"  {mark} mode={r['mode'] or 'default'} dynamic={r['dynamic']}: {what}"


def minified_line(d: dict, tally: Tally) -> str:
    """The repro's line, its trials counted as the phase table counts them (before, the verdict's count of both
    phases without the journal's: "in 10 trials" above a table of 8 and 2)."""
    trials = phase_trials(tally, ("minify", "repro"))
    if d.get("unit") == "warm":
        return (
            f"  repro.py: the script, run cold then warm on one new inductor cache (not reduced: a cut costs two "
            f"runs), {d['seconds']:.1f} s: {trials}; "
            f"{'verified in fresh processes' if d['verified'] else 'NOT verified'}"
        )
    what = ("reduced the script's source", "lines") if d.get("unit") == "lines" else ("minified graph", "nodes")
    return (
        f"  {what[0]} {d['before']} → {d['after']} {what[1]}, {d['seconds']:.1f} s: {trials}; "
        f"repro.py {verified_words(d)}"
    )


def verified_words(d: dict) -> str:
    """How the repro held up: its rate in fresh runs where it was measured (minify/reliability.py)."""
    rate = d.get("reliability")
    if not d["verified"]:
        return "NOT verified" + (
            f" (failed the same way in {rate['failed']} of {rate['runs']} fresh runs)" if rate else ""
        )
    if rate:
        return f"verified: failed the same way in {rate['failed']} of {rate['runs']} fresh runs"
    return "verified in a fresh process"


LINES: dict[str, Callable[[dict], str]] = {
    Event.TRIAL: trial_line,
    Event.RUN_DIR: lambda d: f"run folder {d['path']}",
    Event.STAGE: stage_line,
    Event.ORIGINAL: original_line,
    Event.GRAPH: lambda d: f"  ✗ graph {d['graph']} of {d['count']} fails alone",
    Event.CONFIGS: lambda d: (
        f"  · {d['tried']} config flips: all together "
        f"{'pass' if d.get('together') else 'still fail'}; asked alone (the script's own settings reset"
        f"{''.join(', and ' + n for n in d.get('likely') or ())}), these make it pass: "
        f"{', '.join(d['fixes']) or 'none'}"
    ),
    Event.SUBSYSTEMS: lambda d: (
        f"  · subsystems turned off: {', '.join(d['tried'])}; off alone, these make it pass: "
        f"{', '.join(d['fixes']) or 'none'}"
    ),
    Event.SUBSYSTEM: lambda d: (
        f"  ✗ {d['name']} application #{d['application']} of {d['applications']}: {d['detail']}"
        f"{'  (boundary not stable on re-run)' if d['confirmed'] is False else ''}"
    ),
    Event.MINIFY_START: lambda d: (
        f"  reducing the script's source ({d['nodes']} lines) ..."
        if d["graph"] == "source"
        else f"  minifying graph {d['graph']} ({d['nodes']} nodes) ..."
    ),
    Event.MINIFY_STEP: lambda d: f"    minify: {d['what']} → {d['nodes']} nodes",
    Event.NOTE: lambda d: f"  {d['text']}",
    Event.PACKED: lambda d: f"wrote {d['path']}",
    Event.VERSION: lambda d: "  " + version_line(d["row"]),
}


def verdict_json(v: Verdict) -> dict:
    """The verdict as --json prints it (without the failing graph's code, which stays in verdict.json)."""
    d = v.to_dict()
    d.pop("graph_code", None)
    return d


def doctor_table(r, verbose: bool = False) -> str:
    """The findings as a terminal table: where, what, fix."""
    s = r.speed
    lines = [f"speed: {s['verdict']}"]
    if s.get("speedup") is not None:
        lines.append(
            f"       eager {s['eager_step_seconds'] * 1e3:.3f} ms/call, compiled "
            f"{s['compiled_step_seconds'] * 1e3:.3f} ms/call ({s['steps_timed']} calls after warm-up); "
            f"compile {s['compile_seconds']:.1f} s; {r.graphs} graph(s)"
        )
    for c in r.compile_sites:
        if "ops" in c:  # what each compiled callable compiled
            lines.append(
                f"compiled: {c['label']} at {os.path.basename(c['file'])}:{c['line']}: "
                f"{c['graphs']} graph(s), {c['ops']} ops"
            )
    if r.unobserved:
        lines.append(unobserved_line(r.unobserved))
    elif not r.findings:
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


def models_table(rows: list) -> str:
    """The registry as a table: shape, parameters in all and per rank, risk class."""
    lines = [
        f"{'model':<10} {'hidden':>6} {'layers':>6} {'heads':>5} {'kv':>3} {'inter':>6} {'params':>16} "
        f"{'per rank':>16}  risk"
    ]
    for r in rows:
        lines.append(
            f"{r['model']:<10} {r['hidden']:>6} {r['layers']:>6} {r['heads']:>5} {r['kv_heads']:>3} "
            f"{r['intermediate']:>6} {r['params']:>16,} {r['params_per_rank']:>16,}  {r['risk'].split(':')[0]}"
        )
    return "\n".join(lines)


def pack_show(shown: dict) -> str:
    """`pack --show`: each member with its size, then what was redacted where."""
    lines = [f"{f['path']}  {f['bytes']} bytes" for f in shown["files"]]
    lines.append(f"redacted: {len(shown['redacted'])}")
    lines += [f"  {r['kind']} in {r['place']}" for r in shown["redacted"]]
    return "\n".join(lines)


def _env_text(env: dict) -> str:
    if env.get("this_interpreter"):
        return "this interpreter"
    size = f"{env['bytes'] / 2**30:.1f} GiB" if env.get("bytes") else "?"
    return f"{size}, made in {env['seconds']:.0f} s" + ("" if env.get("created") else " (reused)")


def version_line(row: dict) -> str:
    """One release's result: release, status, what it printed, environment cost."""
    detail = "" if row["status"] == "passes" else f"  {row['detail'][:60]}"
    return f"torch {row['release']:<8} {STATUS_TEXT[row['status']]:<19} {_env_text(row['env'])}{detail}"


def versions_table(result: dict) -> str:
    """reprokit versions: the conclusion first, then release -> result, environment and its cost."""
    rows = [("torch", "result", "seconds", "environment", "detail")]
    for r in result["rows"]:
        rows.append(
            (
                r["release"],
                STATUS_TEXT[r["status"]],
                f"{r['seconds']:.1f}",
                _env_text(r["env"]),
                "" if r["status"] == "passes" else r["detail"][:70],
            )
        )
    width = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [result["summary"], ""]
    lines += ["  ".join(c.ljust(width[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    lines.insert(3, "  ".join("-" * w for w in width))
    lines.append("")
    size = result.get("cache_bytes", 0) / 2**30
    lines.append(
        f"environments in {result['cache_dir']}: {size:.1f} GiB on disk in all (reprokit versions --clean removes them)"
    )
    return "\n".join(lines)


def unobserved_line(unobserved: list) -> str:
    """What doctor could not see: torch's records it failed to attach to, said instead of "none found"."""
    return (
        f"could not attach to torch's {' and '.join(unobserved)} records in this torch: graph breaks, "
        "recompilations and fall-backs were not observed (not the same as none)"
    )


def plan_table(result: dict) -> str:
    """reprokit plan: one row per node count, then the node-hours spent."""
    lines = [
        f"{result['trials']} trials in {result['rounds']} rounds, {result['nodes_per_trial']} node(s) a trial",
        f"{'nodes':>6}  {'wall':>10}",
    ]
    for p in result["plans"]:
        lines.append(f"{p['nodes']:>6}  {_clock(p['seconds']):>10}")
    lines.append(f"node-hours spent: {result['node_hours']:.3f}")
    return "\n".join(lines)


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m // 60}:{m % 60:02d}:{s:02d}"
