"""reprokit doctor, issue and env: reports on a script, a run and the machine, with no bisect."""

from __future__ import annotations

import click

from reprokit.app import doctor as doctor_case
from reprokit.app import env as env_case
from reprokit.app import issue as issue_case
from reprokit.cli_errors import one_line_errors
from reprokit.cli_live import progress
from reprokit.cli_output import echo_json, invoked
from reprokit.cli_render import doctor_table


@click.command()
@click.argument("script")
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--output-dir", "-o", default=None, help="Where run folders go (default ./artifacts).")
@click.option("--timeout", type=float, default=None, help="Seconds per run (default: from the eager run).")
@click.option(
    "--nproc-per-node", "nproc", type=int, default=1, metavar="N", help="Run the script as a torchrun job of N ranks."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option("--verbose", "-v", is_flag=True, help="One line per run, and every finding's detail.")
@one_line_errors("findings")
def doctor(script, script_args, output_dir, timeout, nproc, as_json, verbose):
    """Explain why compiled SCRIPT is not faster: graph breaks, recompilations, silent fall-backs, speed.

    Arguments after -- are passed to the script: reprokit doctor train.py -- --steps 20"""
    with progress(verbose) as printer:
        r = doctor_case.doctor_script(
            script,
            tuple(script_args),
            output_dir=output_dir,
            timeout=timeout,
            ranks=nproc,
            command=invoked("doctor"),
            emit=printer,
        )
    if as_json:
        echo_json(r.to_dict())
    else:
        click.echo(doctor_table(r, verbose))


@click.command()
@click.argument("run_dir")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("issue")
def issue(run_dir, as_json):
    """Print the GitHub issue text of a run, ready for PyTorch's bug-report form."""
    text = issue_case.issue_markdown(run_dir)
    warning = issue_case.upstream_warning(run_dir)
    if warning:
        click.echo(f"reprokit: {warning}", err=True)
    if as_json:
        echo_json({"issue": text})
    else:
        click.echo(text)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@one_line_errors("env")
def env(as_json):
    """Print the environment report alone (torch, CUDA, driver, GPU, Python, packages)."""
    report = env_case.environment_report()
    click.echo(report["data"] if as_json else report["text"])
