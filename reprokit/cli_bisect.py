"""reprokit bisect and reprokit minify: a failure bisected to its stage, graph, config and pass, then minified."""

from __future__ import annotations

import click

from reprokit.app import bisect as bisect_case
from reprokit.app import from_capture as from_capture_case
from reprokit.app import minify as minify_case
from reprokit.app.request import BisectRequest
from reprokit.cli_errors import one_line_errors, verdict_exit
from reprokit.cli_executor import executor_options, executor_settings
from reprokit.cli_live import progress
from reprokit.cli_output import echo_json, invoked
from reprokit.cli_render import verdict_json
from reprokit.cli_summary import summary_table
from reprokit.data.budget import parse_budget
from reprokit.errors import ReprokitError


@click.command()
@click.argument("script", required=False)
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--resume",
    "resume_dir",
    default=None,
    metavar="RUN_DIR",
    help="Continue an interrupted bisect from its journal, with the options it was started with.",
)
@click.option(
    "--from-capture",
    "capture_dir",
    default=None,
    metavar="DIR",
    help="Bisect the failing graph `reprokit capture` wrote, without running the job again.",
)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per trial (default: from the baseline run).")
@click.option(
    "--jobs",
    "-j",
    type=int,
    default=None,
    help="Trials at once (default: one per GPU on a machine with several, else the CPU cores, at most 4).",
)
@click.option("--repeat", type=int, default=1, help="Run the original N times to measure how often it fails.")
@click.option("--check-accuracy", is_flag=True, help="Compare every compiled graph's outputs with eager.")
@click.option("--no-configs", is_flag=True, help="Skip the inductor config flips.")
@click.option("--no-subsystems", is_flag=True, help="Skip bisecting torch's pass and lowering counters.")
@click.option("--no-minify", is_flag=True, help="Stop after the verdict.")
@click.option("--no-pack", is_flag=True, help="Do not write the tarball.")
@click.option("--max-input-bytes", type=int, default=64 << 20, help="Real values kept per graph input (bytes).")
@click.option(
    "--nproc-per-node", "nproc", type=int, default=1, metavar="N", help="Run every trial as a torchrun job of N ranks."
)
@click.option(
    "--kind",
    type=click.Choice(["failure", "slow"]),
    default="failure",
    help="slow: compiled slower than eager (per call, after warm-up) is the failure to bisect.",
)
@click.option("--slow-threshold", type=float, default=10.0, help="--kind slow: percent slower that counts.")
@click.option(
    "--versions",
    "versions_step",
    is_flag=True,
    help="Then run the failure under other torch releases (reprokit versions).",
)
@click.option(
    "--budget",
    default=None,
    metavar="DURATION",
    help="How long the whole run may take (90s, 20m, 1h30m): the verdict is always finished; then "
    "what fits, and the run says what was not asked.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per trial.")
@executor_options
@one_line_errors("failing_stage")
def bisect(script, script_args, resume_dir, capture_dir, budget, as_json, verbose, **options):
    """Name the compiler stage, graph, config and pass that break SCRIPT, then minify and pack it.

    Arguments after -- are passed to the script: reprokit bisect train.py -- --lr 3e-4

    An interrupted bisect continues with: reprokit bisect --resume RUN_DIR

    A job captured once (reprokit capture) is bisected with: reprokit bisect --from-capture DIR"""
    check_sources(script, resume_dir, capture_dir)
    settings = executor_settings(options)
    seconds = parse_budget(budget)
    if seconds is not None and resume_dir:
        raise ReprokitError("--budget is for a new bisect; a resumed run keeps the budget it was given")
    request = request_of(options, settings, seconds)
    with progress(verbose) as printer:
        if capture_dir:
            v = from_capture_case.bisect_from_capture(capture_dir, request, printer)
        elif resume_dir:
            v = bisect_case.resume_bisect(resume_dir, minify=request.minify, pack=request.pack, emit=printer)
        else:
            v = bisect_case.bisect_script(script, tuple(script_args), request, printer)
    if as_json:
        echo_json(verdict_json(v))
    else:
        click.echo(summary_table(v, printer.tally))
    verdict_exit(v)


def check_sources(script, resume_dir, capture_dir) -> None:
    """Exactly one of SCRIPT, --resume and --from-capture says what to bisect."""
    if capture_dir and (script or resume_dir):
        raise ReprokitError("--from-capture takes the capture folder alone: the graph and its failure come from it")
    if resume_dir and script:
        raise ReprokitError("--resume takes the run folder alone: the script and its options come from its run.json")
    if not resume_dir and not script and not capture_dir:
        raise ReprokitError("pass the script to bisect, or --resume RUN_DIR to continue an interrupted bisect")


def request_of(o: dict, settings, seconds) -> BisectRequest:
    """Every option bisect was given, as the value its use cases take."""
    return BisectRequest(
        output_dir=o["output_dir"],
        timeout=o["timeout"],
        jobs=o["jobs"],
        repeat=o["repeat"],
        check_accuracy=o["check_accuracy"],
        configs=not o["no_configs"],
        subsystems=not o["no_subsystems"],
        minify=not o["no_minify"],
        pack=not o["no_pack"],
        max_input_bytes=o["max_input_bytes"],
        ranks=o["nproc"],
        kind=o["kind"],
        slow_threshold=o["slow_threshold"] / 100.0,
        command=invoked("bisect"),
        versions=o["versions_step"],
        executor=settings,
        budget=seconds,
    )


@click.command()
@click.argument("run_dir")
@click.option("--resume", is_flag=True, help="Continue from the smallest failing graph found so far.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True)
@executor_options
@one_line_errors("failing_stage")
def minify(run_dir, resume, as_json, verbose, **executor):
    """Minify the failing graph of an earlier bisect run and write a verified repro.py."""
    settings = executor_settings(executor)
    with progress(verbose) as printer:
        v = minify_case.minify_folder(run_dir, emit=printer, resume=resume, executor=settings)
    if as_json:
        echo_json(verdict_json(v))
    else:
        click.echo(summary_table(v, printer.tally))
    verdict_exit(v)
